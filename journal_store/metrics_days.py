"""The metrics page's rollup: the runs' metric figures summed per team, scenario, model and day.

The runs read model keeps each run's figures as columns (run_columns.metrics_columns); summing
them over 10,000 runs on every page view costs ~20 ms of CPU on SQLite (a sum per figure per
row, and a sort for the grouping), so the runs projector also keeps their sums per (team,
scenario, model, day started), moved by each run's change as the run moves: what a run added
before is taken away and what it adds now is added, in the same transaction as the run's own
row. The page then sums a few hundred rows, whatever the number of runs. The invariant, held by
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
from runtime import metric_sums

DIMENSIONS = ("team", "scenario", "model", "started_on")
KEY = ("team", "scenario", "model", "day")  # the rollup's own names for them
NO_DAY = date(1, 1, 1)  # a run with no start time (reference journals): a key needs a day
# The runs read model's figures a run adds to its group's sums as they are (counts and tokens):
# its tokens, the figures that grow with its journal (runtime.metric_sums.SUMMED, but for the
# seconds, which `share` makes integers of), and what is open now.
SECONDS = ("conflict_wait", "human_wait")
SUMMED = (
    "tokens",
    "coord_tokens",
    "work_tokens",
    *(name for name in metric_sums.SUMMED if name not in SECONDS),
    "conflicts_open",
    "letters_open",
)
# The runs read model's columns a run's share is made of: those, and the ones `share` turns
# into integer sums of their own (a flag, money, seconds).
FIGURES = (*SUMMED, "verified", "cost", "conflict_latency", "human_wait")
# A fork's figures that were its parent's (journal_store/models.py): taken off its share.
INHERITED = {
    "tokens": "inherited_tokens",
    "coord_tokens": "inherited_coord_tokens",
    "work_tokens": "inherited_work_tokens",
}
# What else of a fork's figures its copied prefix held (runtime.metric_sums.SUMMED, one JSON
# column): each taken off its share too. Seconds come as seconds, taken off in milliseconds.
COPIED = metric_sums.SUMMED
COLUMNS = (*DIMENSIONS, *FIGURES, *INHERITED.values(), "inherited_cost", "copied_figures")


def key(run: Mapping[str, Any]) -> tuple[str, str, str, date]:
    return (
        run["team"] or "",
        run["scenario"] or "",
        run["model"] or "",
        run["started_on"] or NO_DAY,
    )


def share(run: Mapping[str, Any]) -> dict[str, int]:
    """What one run adds to its group's sums (its keys are the rollup's sums, SUMS). A column
    the run lacks adds 0: a migration's historic model has only the columns of its time."""
    found = whole(run)
    # A fork's past counts once: the prefix it copied is its parent's share, not its own.
    for name, value in inherited(run).items():
        found[name] -= value
    found["verified_coord_tokens"] = found["coord_tokens"] if found["verified"] else 0
    return found


def whole(run: Mapping[str, Any]) -> dict[str, int]:
    """A run's figures as the rollup's sums, its copied prefix's included (a fork's `share`
    takes that off; services/shared_past.py needs both)."""
    verified = bool(run.get("verified"))
    resolved = run.get("conflicts_resolved") or 0
    cost = run.get("cost")
    found = {
        "runs": 1,
        "verified": int(verified),
        "cost": round((cost or 0.0) * 1_000_000),  # millionths
        "priced": int(cost is not None),
    }
    found.update({name: int(run.get(name) or 0) for name in SUMMED})
    found.update(
        # A run's latency is its mean: times its count, the time its resolved conflicts waited.
        conflict_wait=round((run.get("conflict_latency") or 0.0) * resolved * 1000),  # ms
        human_wait=round((run.get("human_wait") or 0.0) * 1000),
        # Whether the run parked a conflict or lettered work at all: a fact of each run, whole
        # (the runs are what these count), taken before its copied figures are.
        with_conflict=int(resolved + (run.get("conflicts_open") or 0) > 0),
        with_dead_letter=int((run.get("dead_letters") or 0) > 0),
    )
    return found


def inherited(run: Mapping[str, Any]) -> dict[str, int]:
    """What a fork's copied prefix held of the rollup's sums, in its integers (0 each for a
    run that is no fork): its parent's share counts them. An unpriced run's cost adds 0, so
    nothing of it is taken off."""
    found = {name: int(run.get(column) or 0) for name, column in INHERITED.items()}
    theirs = run.get("inherited_cost") if run.get("cost") is not None else None
    found["cost"] = round((theirs or 0.0) * 1_000_000)
    figures = run.get("copied_figures") or {}
    for name in COPIED:
        value = float(figures.get(name) or 0)
        found[name] = round(value * 1000) if name in SECONDS else int(value)
    return found


# The rollup's sums (MetricsDay's fields besides its key): what a run's share holds.
SUMS = tuple(share({}))


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


def refill(runs: Any, rollup: Any) -> None:
    """The rollup anew from the runs' columns, for a migration: `runs` and `rollup` are its
    historic models' managers, and only the columns and sums they have are read and written."""
    have = {f.name for f in runs.model._meta.get_fields()}
    kept = {f.name for f in rollup.model._meta.get_fields()}
    rollup.all().delete()
    every = runs.values(*(c for c in COLUMNS if c in have)).iterator(chunk_size=2_000)
    made = [rollup.model(**{k: v for k, v in row.items() if k in kept}) for row in rows_of(every)]
    rollup.bulk_create(made, batch_size=1_000)


def rows_of(runs: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rollup of these runs from nothing, as rows' fields (the migration that adds it)."""
    groups: dict[tuple[str, str, str, date], dict[str, int]] = {}
    for run in runs:
        group = groups.setdefault(key(run), dict.fromkeys(SUMS, 0))
        for name, value in share(run).items():
            group[name] += value
    return [dict(zip(KEY, k, strict=True)) | sums for k, sums in groups.items()]
