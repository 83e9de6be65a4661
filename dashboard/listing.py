"""The runs list, for its page and GET /api/runs: the filter as understood (or refused, field by
field), the runs it selects in its order, and what a row shows that depends on the clock (a
stall, failing steps). Moved out of dashboard/queries.py, which reads a run's own minutes.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.db import connection
from django.db.models import (
    Exists,
    F,
    OrderBy,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
)

from dashboard.asked import BadQuery, parse_date, shown, words_refused
from dashboard.queries import loose_scan
from journal_store import projection, substrings
from journal_store.models import Finding, RunSummary, RunTag, StoppedView
from journal_store.stopped import UNFOLDED
from journal_store.unindexed import Unindexed
from runtime import instants, status
from runtime.diagnose import SIGNATURES
from runtime.model import EndpointDown
from services import tags
from services.control import failing_steps, stalled
from services.metrics import NO_TEAM, team_column
from services.specialists import endpoints_down
from teams import TEAMS

# The findings a run can have, by their code names (runtime/diagnose.py), in the list's Finding
# box as words.
FINDINGS = tuple(sorted(s.name for s in SIGNATURES))
# The statuses the list's Status box offers: a run's, and that of a run whose views stopped at
# its first event (journal_store/stopped.py), listed with what is known of it.
STATUSES = (*status.STATUSES, UNFOLDED)


@dataclass(frozen=True)
class Sort:
    """One of the runs list's orders: by a column, then by run id in the same direction, so
    that the order is total (a run id is unique) and a page goes on after a (value, run id)
    pair (dashboard/run_pages.py). The run id goes the column's way, so that one index of
    (column DESC, run_id DESC) serves the order read forwards or backwards (migrations 0035,
    0040). Runs without the value (no known start or cost; no duration: still running, or
    without a start) come last in either direction, by run id, on both databases (PostgreSQL
    puts NULLs first in a descending order, SQLite in an ascending one)."""

    column: str
    descending: bool = True
    nullable: bool = False

    def order(self, nulls_last: bool = True) -> list[OrderBy]:
        """The ORDER BY, run id after. A page reads the runs with a value and those without
        apart, each in an index's order: it asks for no NULLs placement (`nulls_last=False`),
        which PostgreSQL would have to match with an index of its own."""
        way = "desc" if self.descending else "asc"
        first: OrderBy = getattr(F(self.column), way)(
            nulls_last=(nulls_last and self.nullable) or None
        )
        return [first, getattr(F("run_id"), way)()]


# How the runs list may be sorted, by the name a filter uses.
SORTS: dict[str, Sort] = {
    "started": Sort("started_at", nullable=True),
    "oldest": Sort("started_at", descending=False, nullable=True),
    "status": Sort("status", descending=False),
    "tokens": Sort("tokens"),
    "cost": Sort("cost", nullable=True),
    "findings": Sort("findings_count"),
    # The duration kept once a run's clock has stopped (journal_store/run_columns.py
    # stopped_after, migration 0040): a run still running has none yet, and comes last.
    "duration": Sort("duration", nullable=True),
}


# The filters the list's form labels in other words than their names (run_list.html): what
# its pages call a field they refuse, where they said "since" of the box "Started from". The
# others are named as asked (the box "Status" is status); the API names its own parameters.
# DATES: the boxes of the days runs started in, labelled alike wherever a form has them (the
# metrics page's; the review queues take its dates from its links).
DATES = {"since": "Started from", "until": "to"}
LABELS = {"q": "Search", **DATES}


@dataclass(frozen=True)
class RunFilter:
    """The runs list's filters as understood. The page's form and the API's query parameters
    both arrive here, and both are refused a value the list cannot take (`of`): a page that
    took a bad date for no bound, an unknown status for any or an unknown sort for the
    default listed runs the person had not asked for, as if their filter had applied."""

    status: str = ""
    team: str = ""
    q: str = ""
    since: date | None = None
    until: date | None = None
    sort: str = "started"
    tag: str = ""
    finding: str = ""

    @classmethod
    def of(cls, params: Mapping[str, Any], labels: Mapping[str, str] | None = None) -> RunFilter:
        """The filter the parameters ask for; BadQuery names every field it cannot take (a
        team no run has is taken: the list says no run matches it), in `labels`' words where
        its reason names another field."""
        if wrong := cls.problems(params, labels):
            raise BadQuery(wrong)
        return cls.understood(params)

    @classmethod
    def understood(cls, params: Mapping[str, Any]) -> RunFilter:
        """The fields it can take, the others as if not asked (the form around a refusal)."""
        wrong = cls.problems(params)

        def asked(name: str) -> str:
            return "" if name in wrong else str(params.get(name) or "")

        return cls(
            status=asked("status"),
            team=asked("team"),
            q=asked("q").strip(),
            since=parse_date(asked("since")),
            until=parse_date(asked("until")),
            sort=asked("sort") or "started",
            tag=asked("tag").strip().lower(),
            finding=asked("finding"),
        )

    @staticmethod
    def problems(
        params: Mapping[str, Any], labels: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        """Why each field the list cannot take cannot be taken, by its name; a reason that
        names another field names it as `labels` does (the page's LABELS), else as asked."""
        named = labels or {}
        wrong: dict[str, str] = {}
        for name in ("since", "until"):
            value = str(params.get(name) or "")
            if value and parse_date(value) is None:
                wrong[name] = f"{shown(value)} is not a date (YYYY-MM-DD)"
        # The metrics filter's words (services/metrics.py): the list said "No runs match".
        since = parse_date(str(params.get("since") or ""))
        until = parse_date(str(params.get("until") or ""))
        if since and until and until < since:
            wrong["until"] = f"{until} is before {named.get('since', 'since')} ({since})"
        if (asked := str(params.get("status") or "")) and asked not in STATUSES:
            wrong["status"] = f"{shown(asked)} is no status; one of {', '.join(STATUSES)}"
        if (sort := str(params.get("sort") or "")) and sort not in SORTS:
            wrong["sort"] = f"{shown(sort)} is no sort; one of {', '.join(SORTS)}"
        # Cut to 32 characters, a longer one listed the runs of another tag.
        tag = str(params.get("tag") or "").strip()
        if tag and not tags.TAG.fullmatch(tag.lower()):
            wrong["tag"] = f"{shown(tag)} is not a tag ({tags.RULE})"
        # Held to what a queue's words are: a search as long as an address could carry was a
        # phrase of thousands of trigrams.
        if why := words_refused(str(params.get("q") or "").strip()):
            wrong["q"] = why
        if (finding := str(params.get("finding") or "")) and finding not in FINDINGS:
            wrong["finding"] = f"{shown(finding)} is no finding; one of {', '.join(FINDINGS)}"
        return wrong


def choices(chosen: RunFilter) -> dict[str, Any]:
    """What the filter form offers, for the list and for the list refused: its boxes' choices."""
    return {
        "statuses": STATUSES,
        "teams": team_choices(chosen.team),
        "sorts": list(SORTS),
        "findings": FINDINGS,
    }


def team_choices(chosen: str = "") -> list[str]:
    """The Team box's choices: the teams installed here, the teams of stored runs (an imported
    run's team may be none of those), NO_TEAM when some runs have no team (as the metrics page
    offers it), and the one asked for, so the box says what the list is filtered by, even a
    team no run has."""
    # A seek per team in the team index, not a read of every run's (a list view asks each time).
    stored = loose_scan("projection_run", "team", "", [], "default")
    teamless = [NO_TEAM] if RunSummary.objects.filter(team="").exists() else []
    return sorted({*TEAMS, *stored, *teamless, *([chosen] if chosen else [])})


class Probe(enum.Enum):
    ASK = "ask"  # the search's index not asked yet: `few` asks it


Few = list[str] | None | Probe


# Runs a searched text may be in for a page of the list to look them up by their ids (the
# poll's mark and count: fewer than substrings.FEW, 128). A page of a text in k runs of N
# either looks up k runs or reads about 50 x N / k in its order: on SQLite at 20,000 runs the
# two cost the same near 400 (a run looked up and sorted about 10 us, one read 1.5 to 2), and
# a text in 270 runs read 5,000 for a page (9.7 ms). The poll's mark stops at the first run
# read, where a maximum over the runs looked up reads them all.
PAGE_FEW = 384


def few(chosen: RunFilter, fewer_than: int = 0) -> list[str] | None:
    """The ids of the runs that may hold the searched text where fewer than `fewer_than` do
    (substrings.FEW without one: a rare text, looked up by them, journal_store/
    substrings.py); None for a more common text, or no search."""
    if not chosen.q:
        return None
    said = substrings.variants(chosen.q)
    return substrings.RUNS.few(said, connection.vendor, fewer_than=fewer_than)


@dataclass(frozen=True)
class Selection:
    """The runs a filter selects, in no order, and the same runs written for a walk of the
    list's order where one serves them (`walked`), the search's index asked once for both."""

    runs: QuerySet[RunSummary]
    walk: QuerySet[RunSummary] | None


def selection(chosen: RunFilter, caught_up: bool = True, fewer_than: int = 0) -> Selection:
    """The filter's runs and walk (`caught_up`: from the read model once it is caught up, as
    `matching`; `fewer_than`: `few`'s, PAGE_FEW for a page)."""
    if caught_up:
        projection.catch_up(wait=False)
    rare = few(chosen, fewer_than)
    return Selection(selected(chosen, rare=rare), walked(chosen, rare=rare))


def runs(chosen: RunFilter) -> QuerySet[RunSummary]:
    """The runs the filter selects, in its order (every one of them: a page of them is
    dashboard/run_pages.py's)."""
    return matching(chosen).order_by(*SORTS[chosen.sort].order())


def matching(chosen: RunFilter) -> QuerySet[RunSummary]:
    """The runs the filter selects, in no order, from the read model once it is caught up
    (without queueing behind somebody else's catch-up: a moment old is fine for a list)."""
    projection.catch_up(wait=False)
    return selected(chosen)


def midnight(day: date) -> datetime:
    """The start of `day` in UTC, the days the filters name."""
    return datetime.combine(day, time.min, tzinfo=UTC)


def walked(chosen: RunFilter, rare: Few = Probe.ASK) -> QuerySet[RunSummary] | None:
    """The runs `selected` selects, written for a walk of the list's order: the filter is
    checked on each run the order's index reads, not looked up in an index of its own; None
    when an index serves the filter in this order already (no filter; a status's or a
    team's runs by their start, migration 0053; a status's by status; a searched text few
    runs hold, whose runs the trigram index names: journal_store/substrings.py).

    A status by tokens, or a tag, took the filter's index and sorted every run it selected:
    15% of the runs failed, 3,000 of 20,000, sorted for a page of 25 (4.4 ms, where the list
    by tokens alone took 1.2). dashboard/run_pages.py walks the order's index for a window of
    runs first and reads on as before only where the window did not fill the page."""
    if connection.vendor != "sqlite":
        # PostgreSQL weighs the two by its statistics: walked, the pages took longer there
        # (bench/filtered_runs.py).
        return None
    rare = few(chosen) if rare is Probe.ASK else rare
    if rare is not None:
        return None  # a rare text: its few runs are looked up by the trigram index
    started = SORTS[chosen.sort].column == "started_at"
    # A searched text many runs hold (or one too short for a trigram) is no reason for a walk:
    # no index serves it, and the one that serves the rest of the filter and the order is the
    # one read, the text checked on each run; alone, the order's own. Walked in windows, a
    # text alone cost more (one run in fifty at 20,000 runs: 4.9 ms a page, 6.9 walked).
    unserved = chosen.tag or chosen.finding
    served = started and not unserved and not (chosen.status and chosen.team)
    # By status, a status's runs are a range of the order's own index (status, run id).
    served |= chosen.sort == "status" and not (chosen.team or unserved)
    if not (chosen.status or chosen.team or unserved) or served:
        return None
    return selected(chosen, walk=True, dates_too=not started)


def selected(
    chosen: RunFilter, walk: bool = False, dates_too: bool = False, rare: Few = Probe.ASK
) -> QuerySet[RunSummary]:
    """The runs the filter selects, in no order, from the read model as it stands. With
    `walk`, written so that no index of its own serves the filter (`walked`); `dates_too`, the
    bounds of the start as well; `rare`, `few`'s answer where it was asked already."""
    qs = RunSummary.objects.all()

    def is_(name: str, value: Any, lookup: str = "exact") -> Q:
        if not walk or (name == "started_at" and not dates_too):
            return Q(**{f"{name}__{lookup}": value})
        return Q(**{f"unindexed_{name}__{lookup}": value})

    if walk:
        qs = qs.alias(
            **{f"unindexed_{n}": Unindexed(F(n)) for n in ("status", "team", "started_at")}
        )
    if chosen.status:
        qs = qs.filter(is_("status", chosen.status))
    if chosen.team:
        # team=(none): the runs with no team, as the metrics page's row of them links here.
        qs = qs.filter(is_("team", team_column(chosen.team)))
    # Days in UTC (TIME_ZONE), as bounds of the start itself: the start's index seeks to them,
    # where `started_at__date` wrapped the column in a function, and a list narrowed to
    # "until a fortnight ago" read every run started since (5,547 SQLite steps at 200 runs,
    # 16,593 at 3,000: tests/dashboard/test_store_pages_cost_the_same_at_any_size.py).
    if chosen.since:
        qs = qs.filter(is_("started_at", midnight(chosen.since), "gte"))
    if chosen.until == date.max:  # the last day there is: no day after it to stop before
        qs = qs.filter(started_at__isnull=False)
    elif chosen.until:
        qs = qs.filter(is_("started_at", midnight(chosen.until + timedelta(days=1)), "lt"))
    if chosen.q:
        # Walked, the match is checked on each run read; else the trigram index finds them.
        said = substrings.variants(chosen.q)
        if walk:
            qs = qs.filter(substrings.RUNS.matched(said))
        else:
            rare = few(chosen) if rare is Probe.ASK else rare
            qs = qs.filter(substrings.RUNS.found(said, rare, connection.vendor))
    if chosen.tag:
        tagged = RunTag.objects.filter(tag=chosen.tag)
        if walk:  # each run's tags looked up by its id as the walk reads it
            qs = qs.filter(Exists(tagged.filter(run_id=OuterRef("run_id"))))
        else:
            qs = qs.filter(run_id__in=Subquery(tagged.values("run_id")))
    if chosen.finding:
        # By the findings' kind index: the runs with one of that kind, however many they have.
        found = Finding.objects.filter(kind=chosen.finding)
        if walk:
            qs = qs.filter(Exists(found.filter(run_id=OuterRef("run_id"))))
        else:
            qs = qs.filter(run_id__in=Subquery(found.values("run_id")))
    return qs


def mark_stalled(rows: Iterable[RunSummary]) -> None:
    """Set `stalled_since` (a datetime, or None) on each run: an active run that nobody drives
    and no step is on its way to. It depends on the clock, so it is worked out when shown."""
    rows = list(rows)
    active = {
        r.run_id: r.started_at.timestamp() if r.started_at else 0.0
        for r in rows
        if status.is_active(r.status)
    }
    since = stalled(active)
    for run in rows:
        at = since.get(run.run_id)
        # `at` may be a lease's expiry as an event said it: one stored before times were
        # bounded may be no time at all (instants.moment puts it at an end of the range).
        run.stalled_since = instants.moment(at) if at is not None else None  # type: ignore[attr-defined]


def mark_stopped(rows: Iterable[RunSummary]) -> None:
    """Set `views_stopped` on each run of the list: the names of its read models that stopped
    at one of its events (journal_store/stopped.py), in one look-up by the page's run ids."""
    rows = list(rows)
    found: dict[str, list[str]] = {}
    ids = [r.run_id for r in rows]
    for run_id, name in StoppedView.objects.filter(run_id__in=ids).values_list(
        "run_id", "projector"
    ):
        found.setdefault(run_id, []).append(name)
    for run in rows:
        run.views_stopped = sorted(found.get(run.run_id, []))  # type: ignore[attr-defined]


def mark_failing(rows: Iterable[RunSummary]) -> None:
    """Set `failing` on each run of the list: its latest failed step (its error and time) when
    the running run's steps are failing, else None (services/control.py failing_steps)."""
    rows = list(rows)
    running = [r.run_id for r in rows if r.status == status.RUNNING]
    found = failing_steps(running)
    # A run whose own steps go on while a specialist of it waits out its model endpoint:
    # the header says so (specialists_down), and the list's badge too, naming it.
    down = endpoints_down([run_id for run_id in running if run_id not in found])
    for run in rows:
        failed = found.get(run.run_id)
        waiting = down.get(run.run_id)
        if failed is not None:
            run.failing = {  # type: ignore[attr-defined]
                "outage": failed.error.type == EndpointDown.__name__,
                "error": str(failed.error),
                "at": datetime.fromtimestamp(failed.t, UTC),
            }
        elif waiting:
            latest = max(waiting, key=lambda d: d.since)
            names = ", ".join(d.sub_id for d in waiting)
            run.failing = {  # type: ignore[attr-defined]
                "outage": True,
                "specialists": names,
                "error": latest.last,
                "at": datetime.fromtimestamp(latest.since, UTC),
            }
        else:
            run.failing = None  # type: ignore[attr-defined]
