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
union is the largest of the measures. `reach` is that measure per run: all of a chosen run's
journal, and for a run left out, the most of it a fork below it holds (no more than the fork
copied). A run left out then adds what is its own (past what it copied itself) of its reach.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.db.models import QuerySet

from journal_store import metrics_days
from journal_store.models import RunSummary

# The sums the rollup keeps (their query names, services.metrics.AS) of which a fork copies a
# part: tokens, cost, and every figure that grows with a journal (runtime.metric_sums.SUMMED).
MEASURES = tuple(f"sum_{name}" for name in metrics_days.inherited({}))
COLUMNS = ("run_id", "parent_id", "lineage", "lineage_cost", *metrics_days.COLUMNS)


@dataclass(frozen=True)
class Run:
    """A run of a fork family: whether the filter chose it, and its measures (cost in
    millionths, as the rollup keeps it; an unknown cost counts 0)."""

    run_id: str
    parent: str
    chosen: bool
    team: str
    day: date | None
    verified: bool
    whole: Mapping[str, int]
    copied: Mapping[str, int]


def measures(row: Mapping[str, Any]) -> tuple[dict[str, int], dict[str, int]]:
    """A run's measures as the rollup keeps them: all its journal's, and what it copied."""
    own, copied = metrics_days.share(row), metrics_days.inherited(row)
    whole = {f"sum_{name}": own[name] + value for name, value in copied.items()}
    return whole, {f"sum_{name}": value for name, value in copied.items()}


def family(chosen_runs: QuerySet[RunSummary]) -> dict[str, Run]:
    """The chosen forks and every run they descend from, chosen or not (none: no chosen fork,
    and nothing is lacking); a parent this store does not hold, as a run left out."""
    found: dict[str, Run] = {}
    rows = list(chosen_runs.exclude(parent_id="").values(*COLUMNS))
    chosen_ids = {row["run_id"] for row in rows}
    # The forks above each fork's parent, as its journal tells them: a run of a chain that is
    # not here still says which run it was forked from and what it copied.
    told: dict[str, Mapping[str, Any]] = {}
    while True:
        for row in rows:
            for fork in row["lineage"] or ():
                told.setdefault(fork["run"], {**fork, "cost": row["lineage_cost"].get(fork["run"])})
            whole, copied = measures(row)
            found[row["run_id"]] = Run(
                run_id=row["run_id"],
                parent=row["parent_id"],
                chosen=row["run_id"] in chosen_ids,
                team=row["team"] or "",
                day=row["started_on"],
                verified=bool(row["verified"]),
                whole=whole,
                copied=copied,
            )
        wanted = {r.parent for r in found.values() if r.parent and r.parent not in found}
        if not wanted:
            return found
        rows = list(
            RunSummary.objects.using(chosen_runs.db).filter(run_id__in=wanted).values(*COLUMNS)
        )
        chosen_ids |= set(chosen_runs.filter(run_id__in=wanted).values_list("run_id", flat=True))
        for run_id in wanted - {row["run_id"] for row in rows}:
            # Not in this store (a fork imported on its own): no share here counts what its
            # forks copied of it, so it stands as a run left out that holds nothing of its own
            # beyond what they copied, and copied what a fork below it says it did.
            copied = dict.fromkeys(MEASURES, 0)
            fork = told.get(run_id)
            if fork is not None:
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
            parent = fork["parent"] if fork is not None else ""
            found[run_id] = Run(run_id, parent, False, "", None, False, whole=copied, copied=copied)


def lacking(
    runs: Mapping[str, Run], held: Callable[[Run], bool] = lambda r: True
) -> dict[str, int]:
    """What the sums of the chosen runs that `held` keeps lack of the past their forks copied:
    the own part, within the forks' reach, of each run they descend from that is not summed.
    Its verified runs' coordination tokens (`sum_verified_coord_tokens`) likewise, among the
    verified ones."""
    children: dict[str, list[Run]] = {}
    for run in runs.values():
        children.setdefault(run.parent, []).append(run)
    out: dict[str, int] = {}
    for name, among, measure in (
        *((s, held, s) for s in MEASURES),
        ("sum_verified_coord_tokens", lambda r: held(r) and r.verified, "sum_coord_tokens"),
    ):
        kept = {r.run_id for r in runs.values() if r.chosen and among(r)}
        out[name] = sum(
            own_reach(r, measure, kept, children) for r in runs.values() if r.run_id not in kept
        )
    return out


def reach(run: Run, measure: str, kept: set[str], children: Mapping[str, list[Run]]) -> int:
    """How much of `run`'s journal, by `measure`, the kept runs hold."""
    if run.run_id in kept:
        return run.whole[measure]
    below = (
        min(reach(c, measure, kept, children), c.copied[measure])
        for c in children.get(run.run_id, [])
    )
    return max(below, default=0)


def own_reach(run: Run, measure: str, kept: set[str], children: Mapping[str, list[Run]]) -> int:
    """What of a run left out the kept runs hold that it did not copy itself."""
    return max(0, reach(run, measure, kept, children) - run.copied[measure])
