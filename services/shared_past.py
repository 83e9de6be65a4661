"""A fork's copied past, counted once in the sums of whatever runs a filter chooses.

A fork's journal begins with its parent's events up to the fork point, model usage too, and the
rollup takes what they hold (tokens, cost, claims, hand-offs, deliveries, seconds waited...) off
the fork's share (journal_store/metrics_days.py): the parent's share counts them. When a
filter keeps a fork and leaves its parent out (a date range, a model), nobody's share counts
them any more. This module gives back what such a selection's sums lack, so that the past a
fork shares is counted once whenever one run that holds it is chosen, and never twice.

Every journal is a prefix of its parent's up to the fork point, then its own events; so what a
selection holds of any one run's journal is a prefix of it, the longest of those its chosen
runs hold, and any measure that grows with a prefix (tokens, cost, a count of events) of the
union is the largest of the measures. A run's reach is that measure per run: all of a chosen
run's journal, and for a run left out, the most of it a chosen run below it holds (no more than
any fork between them copied). A run left out then adds what is its own (past what it copied
itself) of its reach.

What a chosen run holds of each run above it does not depend on which runs a group keeps, so
`family` works it out once per request (`Family.above`, every measure at once), and `lacking`
gives every group of a grouping (each team, each period) from it in one pass: the cost is flat
per fork, where the reach was worked out again per figure, per group and per run above.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet

from journal_store import metrics_days
from journal_store.models import RunSummary

# The sums the rollup keeps (their query names, services.metrics.AS) of which a fork copies a
# part: tokens, cost, and every figure that grows with a journal (runtime.metric_sums.SUMMED).
MEASURES = tuple(f"sum_{name}" for name in metrics_days.inherited({}))
COLUMNS = ("run_id", "parent_id", "lineage", "lineage_cost", *metrics_days.COLUMNS)
COORD = MEASURES.index("sum_coord_tokens")
ALL = "all"  # the one group of `lacking`'s default grouping: every chosen run


@dataclass(frozen=True)
class Run:
    """A run of a fork family: whether the filter chose it, and its measures in the order of
    MEASURES (cost in millionths, as the rollup keeps it; an unknown cost counts 0)."""

    run_id: str
    parent: str
    chosen: bool
    team: str
    day: date | None
    verified: bool
    whole: tuple[int, ...]
    copied: tuple[int, ...]


@dataclass
class Family:
    """The chosen forks and the runs they descend from, by id; and for each chosen run, the
    runs above it (nearest first), each with how much of its journal the chosen run holds."""

    runs: dict[str, Run]
    above: list[tuple[Run, list[tuple[Run, tuple[int, ...]]]]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.above)


def measures(row: Mapping[str, Any]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A run's measures as the rollup keeps them: all its journal's, and what it copied."""
    whole, copied = metrics_days.whole(row), metrics_days.inherited(row)
    return tuple(whole[name] for name in copied), tuple(copied.values())


def family(chosen_runs: QuerySet[RunSummary]) -> Family:
    """The chosen forks and every run they descend from, chosen or not (none: no chosen fork,
    and nothing is lacking); a parent this store does not hold, as a run left out.

    A chosen fork whose parent is chosen too, of its team and started on its day (and verified
    if it is), is in every group its parent is in, so it holds nothing above it that its
    parent's groups lack: it is not read (unless a fork below it needs it). With no filter and
    forks made the day their parent started, that is most forks."""
    same = kin(chosen_runs)
    # The store's forks, through the index of parent_id (`> ''`, not `<> ''`: the same runs, a
    # parent id is never NULL, but a range the index serves), each looked up by its key among
    # the chosen runs. Asked of the chosen runs, a filter's own index won (the team's, the
    # day's), and every run it chose was read to find the few forks among them: /metrics of
    # one team went from 161 SQLite steps to 2,306 here from 200 runs to 3,000.
    forks = (
        RunSummary.objects.using(chosen_runs.db)
        .filter(parent_id__gt="")
        .filter(Exists(chosen_runs.filter(run_id=OuterRef("run_id"))))
        .exclude(Exists(same.filter(verified=True)) | (Q(verified=False) & Exists(same)))
    )
    runs = family_runs(chosen_runs, forks)
    return Family(runs, holds(runs))


def kin(chosen_runs: QuerySet[RunSummary]) -> QuerySet[RunSummary]:
    """The chosen run a fork of the outer query was forked from, of its team and day."""
    return chosen_runs.filter(
        run_id=OuterRef("parent_id"), team=OuterRef("team"), started_on=OuterRef("started_on")
    )


def family_runs(chosen_runs: QuerySet[RunSummary], forks: QuerySet[RunSummary]) -> dict[str, Run]:
    """`forks` and the runs above them, by id: a query per level, and a chain's levels in one
    where the forks' own journals name them (`lineage`)."""
    found: dict[str, Run] = {}
    # The forks above each fork's parent, as its journal tells them: a run of a chain that is
    # not here still says which run it was forked from and what it copied.
    told: dict[str, Mapping[str, Any]] = {}
    rows = list(forks.values(*COLUMNS))
    chosen_ids = {row["run_id"] for row in rows}
    while True:
        for row in rows:
            found[row["run_id"]] = Run(
                row["run_id"],
                row["parent_id"],
                row["run_id"] in chosen_ids,
                row["team"] or "",
                row["started_on"],
                bool(row["verified"]),
                *measures(row),
            )
            costs = row["lineage_cost"] or {}
            for fork in row["lineage"] or ():
                told.setdefault(fork["run"], {**fork, "cost": costs.get(fork["run"])})
        wanted = {r.parent for r in found.values()} | set(told)
        wanted |= {fork["parent"] for fork in told.values()}
        wanted -= {"", *found}
        if not wanted:
            return found
        rows = list(
            RunSummary.objects.using(chosen_runs.db).filter(run_id__in=wanted).values(*COLUMNS)
        )
        chosen_ids |= set(chosen_runs.filter(run_id__in=wanted).values_list("run_id", flat=True))
        for run_id in wanted - {row["run_id"] for row in rows}:
            found[run_id] = missing(run_id, told.get(run_id))


def missing(run_id: str, fork: Mapping[str, Any] | None) -> Run:
    """A run this store does not hold (a fork imported on its own): no share here counts what
    its forks copied of it, so it stands as a run left out that holds nothing of its own beyond
    what they copied, forked from the run, and copying what, a fork below it says (none: as
    a run that is no fork)."""
    if fork is None:
        return Run(run_id, "", False, "", None, False, *measures({}))
    _, copied = measures(
        {
            "inherited_tokens": fork["tokens"],
            "inherited_coord_tokens": fork["coord_tokens"],
            "inherited_work_tokens": fork["work_tokens"],
            "cost": fork["cost"],
            "inherited_cost": fork["cost"],
            "copied_figures": fork["figures"],
        }
    )
    return Run(run_id, fork["parent"], False, "", None, False, whole=copied, copied=copied)


def holds(runs: Mapping[str, Run]) -> list[tuple[Run, list[tuple[Run, tuple[int, ...]]]]]:
    """For each chosen run, the runs above it, nearest first, each with how much of its
    journal the chosen run holds: its whole, within what every fork between them copied. A
    chain that comes back on itself (journals that say so: an import takes what it is given)
    stops where it would."""
    found = []
    for run in runs.values():
        if not run.chosen:
            continue
        path, seen, held, below = [], {run.run_id}, run.whole, run
        while (up := runs.get(below.parent)) is not None and up.run_id not in seen:
            held = tuple(map(min, held, below.copied))
            path.append((up, held))
            seen.add(up.run_id)
            below = up
        if path:
            found.append((run, path))
    return found


def lacking(
    family: Family, group_of: Callable[[Run], Hashable | None] = lambda r: ALL
) -> dict[Hashable, dict[str, int]]:
    """What the sums of each group of chosen runs (`group_of` names a run's; None: in none)
    lack of the past their forks copied: the own part, within its reach, of each run above
    them that the group does not keep. Its verified runs' coordination tokens
    (`sum_verified_coord_tokens`) likewise, among the verified ones."""
    out: dict[Hashable, dict[str, int]] = {}

    def verified(run: Run) -> Hashable | None:
        return group_of(run) if run.verified else None

    every = tuple(enumerate(MEASURES))
    for among, names in ((group_of, every), (verified, ((COORD, "sum_verified_coord_tokens"),))):
        reach: dict[Hashable, dict[str, tuple[int, ...]]] = {}
        for run, path in family.above:
            group = among(run)
            if group is None:
                continue
            reached = reach.setdefault(group, {})
            for up, held in path:
                if up.chosen and among(up) == group:
                    break  # kept: it holds all it is, and more of what is above it than this
                was = reached.get(up.run_id)
                reached[up.run_id] = held if was is None else tuple(map(max, was, held))
        for group, reached in reach.items():
            sums = out.setdefault(group, {})
            for up_id, held in reached.items():
                copied = family.runs[up_id].copied
                for i, name in names:
                    sums[name] = sums.get(name, 0) + max(0, held[i] - copied[i])
    return out
