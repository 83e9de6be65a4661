"""The coordination metrics across runs: the filter as people type it, and the sums in SQL.

Each run's figures are columns of the runs read model (journal_store.projection's
`metrics_columns`), and the runs projector keeps their sums per team, scenario, model and day
(journal_store/metrics_days.py) as the runs move. A page across 10,000 runs is then one
aggregate query over a few hundred rows, on SQLite and PostgreSQL alike, instead of every run's
fold state read and folded in Python (~1 s per 10,000 runs) or every run's columns summed (~20
ms of CPU). Every rate across runs is a ratio of sums (each run's rate's parts are summed),
never a mean of the runs' ratios: a run with one claim weighs what one claim weighs. The
metrics page, the API and the bench all read `across`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.db.models import Exists, F, Min, OuterRef, QuerySet, Sum

from journal_store import metrics_days, projection, queues
from journal_store.models import MetricsDay, RunSummary
from services import shared_past
from services.asked import BadQuery, shown
from teams import TEAMS

# The longest value each text filter takes: the read model's column widths.
TEXT_FIELDS = {"team": 64, "scenario": 64, "model": 100}
DATE_FIELDS = ("since", "until")
DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# The runs of a date filter whose items waited since before they started read as a list of
# their ids up to this many; past it, as a query (services/metrics.py early_runs).
EARLY = 500
# The runs with no team (a journal written without TeamStarted): their row in the teams table,
# and the `team` that chooses them. No team can be named so: a team's name begins with a
# letter or a digit and holds no parenthesis (runtime/team.py TEAM_NAME).
NO_TEAM = "(none)"


def team_column(team: str) -> str:
    """The read models' team column for a chosen team: they keep a run's missing team as "",
    which NO_TEAM chooses (the runs list reads it so too, dashboard/listing.py)."""
    return "" if team == NO_TEAM else team


# The sums each group of runs needs, as the rollup keeps them (journal_store/metrics_days.py).
SUMS = metrics_days.SUMS
# The rates across runs, each as (numerator, denominator) of the sums above.
RATES = {
    "coordination_overhead_ratio": ("coord_tokens", "work_tokens"),
    "ownership_conflict_rate": ("contested", "claims"),
    "conflict_run_rate": ("with_conflict", "runs"),
    "dead_letter_run_rate": ("with_dead_letter", "runs"),
    "stale_message_rate": ("stale_deliveries", "deliveries"),
    "handoff_failure_rate": ("failed_handoffs", "handoffs"),
    "duplicate_work_rate": ("shared_files", "files_written"),
    # Over the tasks looked at, which hold every livelocked one; the reviewed alone do not (a
    # desk's flip-flop livelocks with nothing reviewed).
    "livelock_rate": ("livelocked_tasks", "looked_at_tasks"),
    "verification_independence_rate": ("independent_verifications", "verifications"),
    "deadlock_rate": ("deadlocks", "waits"),
    "commitment_orphan_rate": ("orphaned", "commitments"),
    "verified_rate": ("verified", "runs"),
}
# The sums as the queries name them: an aggregate may not take a column's own name.
AS = {f"sum_{name}": Sum(name) for name in SUMS}


# Filter values the metrics page cannot take: a message per field, each naming it.
BadFilter = BadQuery


@dataclass(frozen=True)
class Choices:
    """What each text filter may be: the installed teams and their scenarios, and whatever the
    stored runs hold (an imported journal's team, an endpoint's model name). `scenarios_of`
    holds each team's scenarios, its own and those its stored runs name."""

    team: list[str]
    scenario: list[str]
    model: list[str]
    scenarios_of: dict[str, list[str]]

    @classmethod
    def read(cls, using: str = "default") -> Choices:
        groups = MetricsDay.objects.using(using).order_by()

        def stored(name: str) -> set[str]:
            found = groups.values_list(name, flat=True).distinct()
            return {v for v in found if v}

        of = {name: set(team.scenarios) for name, team in TEAMS.items()}
        teams = set(TEAMS)
        for team, scenario in groups.values_list("team", "scenario").distinct():
            teams.add(team or NO_TEAM)  # runs with no team are chosen as NO_TEAM
            if scenario:
                of.setdefault(team or NO_TEAM, set()).add(scenario)
        return cls(
            team=sorted(teams),
            scenario=sorted({s for t in TEAMS.values() for s in t.scenarios} | stored("scenario")),
            model=sorted(stored("model")),
            scenarios_of={team: sorted(scenarios) for team, scenarios in of.items()},
        )

    def for_team(self, team: str) -> Choices:
        """The choices once `team` is chosen: its scenarios only (all of them for no team, or
        one that is not a choice)."""
        if team not in self.team:
            return self
        return replace(self, scenario=self.scenarios_of.get(team, []))


@dataclass(frozen=True)
class MetricsFilter:
    """Which runs the figures cover: a team, a scenario, a model, and the days they started
    in (since and until included, in UTC). Empty: any."""

    team: str = ""
    scenario: str = ""
    model: str = ""
    since: date | None = None
    until: date | None = None

    @classmethod
    def parse(
        cls,
        params: Mapping[str, Any],
        choices: Choices | None = None,
        labels: Mapping[str, str] | None = None,
    ) -> MetricsFilter:
        """The filter the parameters ask for; BadFilter names every field it cannot take (a
        reason that names another field names it as `labels` does: a page's form's words)."""
        named = labels or {}
        problems: dict[str, str] = {}
        texts: dict[str, str] = {}
        for name, longest in TEXT_FIELDS.items():
            value = str(params.get(name) or "").strip()
            if len(value) > longest:
                problems[name] = f"longer than {longest} characters"
            elif any(unicodedata.category(c).startswith("C") for c in value):
                problems[name] = "holds control characters"
            else:
                texts[name] = value
        wanted = {name: value for name, value in texts.items() if value}
        if wanted:
            known = choices or Choices.read()
            for name, value in wanted.items():
                allowed: list[str] = getattr(known, name)
                if value not in allowed:
                    listed = ", ".join(allowed[:20]) or "none yet"
                    problems[name] = f"no run or team knows {name} {shown(value)} (known: {listed})"
            # A scenario of another team would choose no run at all: said, not summed as nothing.
            team, scenario = wanted.get("team"), wanted.get("scenario")
            if team and scenario and not problems.keys() & {"team", "scenario"}:
                own = known.for_team(team).scenario
                if scenario not in own:
                    listed = ", ".join(own[:20]) or "none"
                    problems["scenario"] = (
                        f"{shown(scenario)} is not a scenario of team {shown(team)} "
                        f"(its scenarios: {listed})"
                    )
        dates: dict[str, date | None] = {}
        for name in DATE_FIELDS:
            value = str(params.get(name) or "").strip()
            try:
                # The form alone, then the calendar: date.fromisoformat also reads a week's day
                # (2020-W01-1 is 2019-12-30) and a basic date with a time (20200101T0).
                if value and not DAY.fullmatch(value):
                    raise ValueError(value)
                dates[name] = date.fromisoformat(value) if value else None
            except ValueError:
                problems[name] = f"{shown(value)} is not a date (YYYY-MM-DD)"
        since, until = dates.get("since"), dates.get("until")
        if since and until and until < since:
            problems["until"] = f"{until} is before {named.get('since', 'since')} ({since})"
        if problems:
            raise BadFilter(problems)
        return cls(since=since, until=until, **texts)

    def params(self) -> dict[str, str]:
        """The filter as query parameters (for links and the form), empty ones left out."""
        found = {
            "team": self.team,
            "scenario": self.scenario,
            "model": self.model,
            "since": self.since.isoformat() if self.since else "",
            "until": self.until.isoformat() if self.until else "",
        }
        return {k: v for k, v in found.items() if v}

    def said(self) -> str:
        """The filter in words, as a list of the runs it chooses goes on ("" for every run)."""
        parts = ["with no team"] if self.team == NO_TEAM else []
        parts += [f"of team {self.team}"] if self.team and self.team != NO_TEAM else []
        parts += [f"of scenario {self.scenario}"] if self.scenario else []
        parts += [f"on model {self.model}"] if self.model else []
        if self.since and self.until:
            parts.append(f"started from {self.since} to {self.until} (UTC)")
        elif self.since:
            parts.append(f"started on or after {self.since} (UTC)")
        elif self.until:
            parts.append(f"started on or before {self.until} (UTC)")
        return ", ".join(parts)

    def groups(self, using: str = "default") -> QuerySet[MetricsDay]:
        """The rollup's groups of the runs this filter chooses."""
        qs = self.narrowed(MetricsDay.objects.using(using).order_by(), "day")
        if self.since or self.until:
            qs = qs.exclude(day=metrics_days.NO_DAY)
        return qs

    def runs(self, using: str = "default") -> QuerySet[RunSummary]:
        """The runs read model's rows of the runs this filter chooses (a run with no start
        time is on no day, so a date range leaves it out, as it does its rollup group)."""
        return self.narrowed(RunSummary.objects.using(using).order_by(), "started_on")

    def items(self, qs: QuerySet[Any], using: str = "default") -> QuerySet[Any]:
        """A review queue's rows (`qs`) of the runs this filter chooses: all when it chooses
        every run."""
        if not self.params():
            return qs
        # Each row's run looked up by its key, where `run_id IN (...)` had SQLite list every
        # run the filter chose first: a queue's page of 576 open dead letters among 10,000
        # runs, all chosen, took 15.4 ms that way and 3.4 this (bench/queue_waits.py).
        return qs.filter(Exists(self.runs(using).filter(run_id=OuterRef("run_id"))))

    def early_runs(self, using: str = "default") -> Sequence[str] | QuerySet[Any] | None:
        """The runs of this filter's dates one of whose review items, still open, was opened
        before the run started (a journal whose times run backwards: an imported one, clocks
        that disagree), by the partial index of them (migration 0055): the dates alone, since
        with a team too SQLite took the team's index and read every run of the team
        (bench/oldest_open.py). Their ids, or past EARLY of them the query of their ids; None
        when there are none, the usual case."""
        dates = replace(MetricsFilter(), since=self.since, until=self.until)
        found = dates.runs(using).filter(waiting_since__lt=F("started_at")).values("run_id")
        ids = [row["run_id"] for row in found[: EARLY + 1]]
        if not ids:
            return None
        return found if len(ids) > EARLY else ids

    def least_waiting(self, using: str = "default") -> datetime | None:
        """Of a filter by team, scenario or model alone, the least time any of its runs has
        waited for a person since (`waiting_since`): none of their open items was opened
        before it (the runs projector's word, as the early runs are). None for any other
        filter, or where none of its runs waits."""
        if self.since or self.until or not self.params():
            return None
        runs = self.runs(using).filter(waiting_since__isnull=False)
        least: datetime | None = runs.aggregate(least=Min("waiting_since"))["least"]
        return least

    def narrowed(self, qs: QuerySet[Any], day: str) -> QuerySet[Any]:
        for name in TEXT_FIELDS:
            if value := getattr(self, name):
                qs = qs.filter(**{name: team_column(value) if name == "team" else value})
        if self.since:
            qs = qs.filter(**{f"{day}__gte": self.since})
        if self.until:
            qs = qs.filter(**{f"{day}__lte": self.until})
        return qs


@dataclass
class Across:
    """The figures of the runs a filter chose: in all, per period they started in, per team."""

    chosen: MetricsFilter
    totals: dict[str, Any]
    period: str = "day"  # the width of each period: day, week or month
    periods: list[dict[str, Any]] = field(default_factory=list)
    teams: list[dict[str, Any]] = field(default_factory=list)
    # The undecided review item that has waited longest (`oldest_open`), when one waits.
    oldest_open: dict[str, Any] | None = None
    # False: the runs span more than PERIODS_FILLED periods, and only those runs started in
    # are listed (the periods between, without runs, are left out).
    every_period: bool = True
    # Of the runs, those with no start time (a journal written without times): on no day, so
    # in no period, though in the totals and the teams.
    undated: int = 0


def oldest_open(chosen: MetricsFilter, using: str = "default") -> dict[str, Any] | None:
    """Of the review items still undecided in the runs `chosen` selects, the one opened first:
    its queue, id, run and the time it was opened. The sums say how many wait, not for how
    long; a dead letter left for a week would read the same as one left for a minute."""
    found = []
    # Under a first day, the items opened from its midnight on, and those of the runs that
    # waited since before they started: only those can be opened before the first day and be
    # of a run started on it or after. The walk of every open item oldest first, each one's
    # run looked up, read every item opened before the first day (the API's last week:
    # 6,593 SQLite steps at 200 runs, 14,252 at 3,000; the oldest itself 146 at both now).
    # The early runs are the runs projector's word: an item opened before its run's start,
    # in a batch the queues have applied and the runs not yet, is named once the runs catch
    # up.
    first = datetime.combine(chosen.since, time(), tzinfo=UTC) if chosen.since else None
    early = chosen.early_runs(using) if first else None
    # A team's (a scenario's, a model's) alone: from the least time any of its runs has
    # waited since (an index of it per column, migration 0057), where the walk read every
    # open item opened before the team's first, a team that began late in a large store.
    bound = first or chosen.least_waiting(using)
    for queue in queues.QUEUES:
        rows = chosen.items(queue.model._default_manager.using(using), using)
        opened = rows if bound is None else rows.filter(created_at__gte=bound)
        items = [queues.oldest_open(queue, opened)]
        if early is not None:  # (a query's truth would read its rows)
            items.append(queues.oldest_open_of(rows, early))
        found += [(i.created_at, i.position, queue.name, i) for i in items if i is not None]
    if not found:
        return None
    since, _, name, item = min(found, key=lambda each: each[:2])
    return {"queue": name, "id": item.pk, "run_id": item.run_id, "since": since}


def figures(sums: Mapping[str, Any]) -> dict[str, Any]:
    """A group's sums (None for an empty group's sums is 0) and the rates derived from them."""
    out: dict[str, Any] = {name: sums.get(f"sum_{name}") or 0 for name in SUMS}
    # Stored in millionths and milliseconds (integers: a run's share comes back out exactly).
    out["cost"] = out["cost"] / 1_000_000 if out["priced"] else None  # None: no run priced
    out["conflict_wait"] /= 1000
    out["human_wait"] /= 1000
    for name, (part, whole) in RATES.items():
        out[name] = round(out[part] / out[whole], 4) if out[whole] else None
    verified = out["verified"]
    out["tokens_per_verified_success"] = round(out["tokens"] / verified, 1) if verified else None
    # Money only when every run of the group has a known cost: a partial sum would flatter it.
    out["cost_per_verified_success"] = (
        round(out["cost"] / verified, 6)
        if verified and out["priced"] == out["runs"] and out["cost"] is not None
        else None
    )
    out["coordination_cost_per_verified_success"] = (
        round(out["verified_coord_tokens"] / verified, 1) if verified else None
    )
    resolved = out["conflicts_resolved"]
    out["conflict_resolution_latency"] = (
        round(out["conflict_wait"] / resolved, 3) if resolved else None
    )
    out["conflict_wait"] = round(float(out["conflict_wait"]), 3)
    out["human_wait"] = round(float(out["human_wait"]), 3)
    return out


# The most periods listed from the first run's to the last run's, those without runs too (ten
# years of months). An import may start a run in 1970 and another in 2999: every month between
# was 12,360 periods, a 14 MB answer and a 5 MB page of empty months.
PERIODS_FILLED = 120


def filled(first: date, last: date, period: str) -> list[date]:
    """Every period's start from `first`'s to `last`'s; [] when there are more than
    PERIODS_FILLED (it stops counting there)."""
    found: list[date] = []
    start = first
    while start <= last:
        if len(found) == PERIODS_FILLED:
            return []
        found.append(start)
        start = after(start, period)
    return found


def period_of(first: date, last: date) -> str:
    """Days for two months or less, weeks for a year or less, months beyond."""
    span = last - first
    return "day" if span <= timedelta(days=62) else "week" if span <= timedelta(366) else "month"


def start_of(day: date, period: str) -> date:
    """The first day of the period `day` falls in: itself, its week's Monday, its month's 1st."""
    if period == "week":
        return day - timedelta(days=day.weekday())
    if period == "month":
        return day.replace(day=1)
    return day


def after(start: date, period: str) -> date:
    """The first day of the period after the one starting on `start`."""
    if period == "month":
        return date(start.year + start.month // 12, start.month % 12 + 1, 1)
    return start + timedelta(days=7 if period == "week" else 1)


def team_of(run: shared_past.Run) -> str:
    """The team row a run is in (its runs with no team: NO_TEAM)."""
    return run.team or NO_TEAM


def period_of_run(period: str) -> Callable[[shared_past.Run], date | None]:
    """The first day of the period a run started in (None: it has no start time)."""
    return lambda run: None if run.day is None else start_of(run.day, period)


def add(into: dict[str, Any], sums: Mapping[str, Any]) -> None:
    """Add a group's sums to another's (a sum absent or None adds nothing: no priced run)."""
    for name in AS:
        value = sums.get(name)
        if value is not None:
            into[name] = into.get(name, 0) + value


def across(chosen: MetricsFilter, using: str = "default") -> Across:
    """The figures of the runs `chosen` selects, from the read model once it is caught up
    (without queueing behind somebody else's catch-up: a moment old is fine here).

    One query sums the rollup's groups per team and day (a few hundred rows, whatever the
    number of runs); the totals, the teams and the periods (days, weeks or months) are those
    rows added up, as sums add up.
    """
    projection.catch_up(using=using, wait=False)
    rows = chosen.groups(using).values("team", "day").annotate(**AS)
    total: dict[str, Any] = {}
    teams: dict[str, dict[str, Any]] = {}
    days: dict[date, dict[str, Any]] = {}
    for row in rows:
        add(total, row)
        add(teams.setdefault(row["team"] or NO_TEAM, {}), row)
        if row["day"] != metrics_days.NO_DAY:
            add(days.setdefault(row["day"], {}), row)
    # A fork chosen without the run it was forked from: the past it copied is in no share.
    family = shared_past.family(chosen.runs(using)) if total else None
    if family:
        add(total, shared_past.lacking(family).get(shared_past.ALL, {}))
        by_team = shared_past.lacking(family, team_of)
        for team, sums in teams.items():
            add(sums, by_team.get(team, {}))
    undated = total.get("sum_runs", 0) - sum(d["sum_runs"] for d in days.values())
    found = Across(chosen, figures(total), undated=undated)
    if found.totals["conflicts_open"] or found.totals["letters_open"]:
        found.oldest_open = oldest_open(chosen, using)
    found.teams = [{"team": team, **figures(teams[team])} for team in sorted(teams)]
    if days:
        found.period = period_of(min(days), max(days))
        # Every period from the first to the last, the empty ones too: a gap in time shows.
        # Past PERIODS_FILLED, only the periods runs started in.
        starts = sorted({start_of(day, found.period) for day in days})
        every = filled(starts[0], starts[-1], found.period)
        found.every_period = bool(every)
        periods: dict[date, dict[str, Any]] = {start: {} for start in every or starts}
        for day in sorted(days):
            add(periods[start_of(day, found.period)], days[day])
        by_period = shared_past.lacking(family, period_of_run(found.period)) if family else {}
        for start, sums in periods.items():
            add(sums, by_period.get(start, {}))
        found.periods = [{"start": start, **figures(sums)} for start, sums in periods.items()]
    return found


__all__ = [
    "NO_TEAM",
    "Across",
    "BadFilter",
    "Choices",
    "MetricsFilter",
    "across",
    "team_column",
]
