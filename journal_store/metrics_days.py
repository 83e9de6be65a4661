"""The metrics page's rollup: the runs' metric figures summed per team, scenario, model and day.

The runs read model keeps each run's figures as columns (projection.metrics_columns); summing
them over 10,000 runs on every page view costs ~20 ms of CPU on SQLite (27 sums per row, and
a sort for the grouping), so the runs projector also keeps their sums per (team, scenario,
model, day started), moved by each run's change as the run moves: what a run added before is
taken away and what it adds now is added, in the same transaction as the run's own row. The
page then sums a few hundred rows, whatever the number of runs. The invariant, held by
tests/journal_store/test_projection_matches_views.py: the rollup equals the runs read model
grouped by those four columns.

Sums are integers (money in millionths, seconds in milliseconds), so that taking a run's share
away gives back exactly what adding it gave, and a rebuild equals the incremental path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

from journal_store.fold_rows import upsert
from journal_store.models import MetricsDay, RunSummary

DIMENSIONS = ("team", "scenario", "model", "started_on")
KEY = ("team", "scenario", "model", "day")  # the rollup's own names for them
NO_DAY = date(1, 1, 1)  # a run with no start time (reference journals): a key needs a day
# The runs read model's columns a run's share is made of.
FIGURES = (
    "verified",
    "tokens",
    "cost",
    "coord_tokens",
    "work_tokens",
    "claims",
    "contested",
    "handoffs",
    "failed_handoffs",
    "deliveries",
    "stale_deliveries",
    "files_written",
    "shared_files",
    "reviewed_tasks",
    "livelocked_tasks",
    "verifications",
    "independent_verifications",
    "conflicts_resolved",
    "conflicts_open",
    "conflict_latency",
    "human_wait",
    "dead_letters",
)
COLUMNS = (*DIMENSIONS, *FIGURES)
# The rollup's sums: how many runs, and each figure's sum.
SUMS = (
    "runs",
    "verified",
    "tokens",
    "cost",
    "priced",
    "coord_tokens",
    "work_tokens",
    "verified_coord_tokens",
    "claims",
    "contested",
    "handoffs",
    "failed_handoffs",
    "deliveries",
    "stale_deliveries",
    "files_written",
    "shared_files",
    "reviewed_tasks",
    "livelocked_tasks",
    "verifications",
    "independent_verifications",
    "conflicts_resolved",
    "conflicts_open",
    "conflict_wait",
    "human_wait",
    "dead_letters",
    "with_conflict",
    "with_dead_letter",
)
PLAIN = tuple(name for name in SUMS if name in FIGURES and name not in ("verified", "cost"))


def key(run: Mapping[str, Any]) -> tuple[str, str, str, date]:
    return (
        run["team"] or "",
        run["scenario"] or "",
        run["model"] or "",
        run["started_on"] or NO_DAY,
    )


def share(run: Mapping[str, Any]) -> dict[str, int]:
    """What one run adds to its group's sums."""
    verified = bool(run["verified"])
    resolved = run["conflicts_resolved"] or 0
    found = {name: int(run[name] or 0) for name in PLAIN}
    found.update(
        runs=1,
        verified=int(verified),
        cost=round((run["cost"] or 0.0) * 1_000_000),  # millionths
        priced=int(run["cost"] is not None),
        verified_coord_tokens=run["coord_tokens"] if verified else 0,
        # A run's latency is its mean: times its count, the time its resolved conflicts waited.
        conflict_wait=round((run["conflict_latency"] or 0.0) * resolved * 1000),  # ms
        human_wait=round((run["human_wait"] or 0.0) * 1000),
        with_conflict=int(resolved + (run["conflicts_open"] or 0) > 0),
        with_dead_letter=int((run["dead_letters"] or 0) > 0),
    )
    return found


def before(using: str, run_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The runs' columns as they stand, before a batch moves them (absent: a new run)."""
    ids = list(run_ids)
    rows = RunSummary.objects.using(using).filter(run_id__in=ids).values("run_id", *COLUMNS)
    return {row.pop("run_id"): row for row in rows}


def move(cursor: Any, old: Mapping[str, Mapping[str, Any]], new: Mapping[str, Any]) -> None:
    """Move the rollup by each run's change: its old share taken from its old group, its new
    share added to its new one. `new` holds every run of the batch, as it now stands."""
    deltas: dict[tuple[str, str, str, date], dict[str, int]] = {}
    for run_id, after in new.items():
        prior = old.get(run_id)
        moves = [(after, 1)] if prior is None else [(prior, -1), (after, 1)]
        for run, sign in moves:
            group = deltas.setdefault(key(run), dict.fromkeys(SUMS, 0))
            for name, value in share(run).items():
                group[name] += sign * value
    rows = [(*k, *d.values()) for k, d in deltas.items() if any(d.values())]
    if not rows:
        return
    table = MetricsDay._meta.db_table
    q = cursor.db.ops.quote_name
    added = ", ".join(f"{q(n)} = {q(table)}.{q(n)} + excluded.{q(n)}" for n in SUMS)
    upsert(cursor, table, KEY, rows, (*KEY, *SUMS), (), added)
    if any(d["runs"] < 0 for d in deltas.values()):
        cursor.execute(f"DELETE FROM {q(table)} WHERE {q('runs')} = 0")  # a group left empty


def rows_of(runs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rollup of these runs from nothing, as rows' fields (the migration that adds it)."""
    groups: dict[tuple[str, str, str, date], dict[str, int]] = {}
    for run in runs:
        group = groups.setdefault(key(run), dict.fromkeys(SUMS, 0))
        for name, value in share(run).items():
            group[name] += value
    return [dict(zip(KEY, k, strict=True)) | sums for k, sums in groups.items()]
