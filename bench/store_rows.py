"""A store's read-model rows as the projectors write them, made in bulk without journals: runs'
summaries, a dead letter and a conflict per run, and the metrics rollup of the runs.

What bench/runs_pages.py seeds, and what
tests/dashboard/test_store_pages_cost_the_same_at_any_size.py builds a store of: the store-wide
pages (the runs list, the review queues, /metrics) read these rows, and none of them reads a
run's journal. Imported once Django is set up; it reads no arguments.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from django.db.models import QuerySet

from dashboard import listing, run_pages
from journal_store import metrics_days
from journal_store.models import Conflict, DeadLetter, MetricsDay, RunSummary

NOW = datetime(2026, 12, 1, tzinfo=UTC)  # the runs start in the 30 days before


def runs_of(size: int, rng: random.Random) -> list[RunSummary]:
    """`size` summaries: starts over 30 days to the microsecond, one in 20 sharing its start
    with the run before (runs started together), some without a start or a cost, some running."""
    runs, started = [], NOW
    for n in range(size):
        if rng.random() >= 0.05:
            started = NOW - timedelta(seconds=rng.uniform(0, 30 * 86_400))
        running = rng.random() < 0.02
        timed = rng.random() >= 0.005
        runs.append(
            RunSummary(
                run_id=f"r-{rng.getrandbits(48):012x}",
                team=rng.choices(["repo-fix", "support-desk", "solo"], [80, 15, 5])[0],
                scenario="first-flight",
                task=f"task {n}",
                status="running"
                if running
                else rng.choices(["done", "failed", "dead-lettered"], [80, 15, 5])[0],
                stage="fix" if running else "complete",
                started_at=started if timed else None,
                # The day the projector keeps beside the start (the metrics' filters read it).
                started_on=started.date() if timed else None,
                finished_at=None
                if running or not timed
                else started + timedelta(seconds=rng.uniform(20, 900)),
                duration=None,  # as the projector keeps it: below
                tokens=rng.randrange(0, 200_000),
                cost=None if rng.random() < 0.05 else round(rng.uniform(0, 3), 6),
                findings_count=rng.choice([0, 0, 0, 1, 1, 2, 3]),
                event_count=rng.randrange(20, 200),
            )
        )
        last = runs[-1]
        if last.started_at and last.finished_at:
            last.duration = last.finished_at - last.started_at
    return runs


def letters_of(runs: list[RunSummary], rng: random.Random) -> list[DeadLetter]:
    """A dead letter per run, 85% of them decided: what a queue holds after as many runs."""
    return [
        DeadLetter(
            letter_id=f"{run.run_id}:1",
            run_id=run.run_id,
            status="open" if rng.random() < 0.15 else rng.choice(["retried", "discarded"]),
            position=(n + 1) * 100,
            created_at=run.started_at or datetime(2026, 11, 1, tzinfo=UTC),
            reason="no reply by turn 9",
        )
        for n, run in enumerate(runs)
    ]


def conflicts_of(runs: list[RunSummary], rng: random.Random) -> list[Conflict]:
    """A conflict per run (two agents' claims on an order's status, as the support desk parks
    one), 85% of them resolved, each after its run's dead letter in the journal."""
    claims = [{"agent": "a", "value": "shipped"}, {"agent": "b", "value": "cancelled"}]
    return [
        Conflict(
            conflict_id=f"c-{run.run_id}",
            run_id=run.run_id,
            status="open" if rng.random() < 0.15 else "resolved",
            position=(n + 1) * 100 + 50,
            created_at=run.started_at or datetime(2026, 11, 1, tzinfo=UTC),
            subject=f"order:{n}",
            predicate="status",
            conflict_type="value",
            claims=claims,
        )
        for n, run in enumerate(runs)
    ]


def store(runs: list[RunSummary], rng: random.Random) -> None:
    """The runs, a dead letter and a conflict each, and the metrics rollup of the runs (which
    the runs projector keeps beside their rows; a bulk insert writes no rollup)."""
    RunSummary.objects.bulk_create(runs, batch_size=2_000)
    DeadLetter.objects.bulk_create(letters_of(runs, rng), batch_size=2_000)
    Conflict.objects.bulk_create(conflicts_of(runs, rng), batch_size=2_000)
    waiting_since()
    metrics_days.refill(RunSummary.objects, MetricsDay.objects)


def waiting_since() -> None:
    """Each run's `waiting_since` from its open items, as the runs projector keeps it (the
    time its oldest open item was opened; None: none open): a bulk insert writes none."""
    oldest: dict[str, datetime] = {}
    for model in (DeadLetter, Conflict):
        for run_id, at in model.objects.filter(status="open").values_list("run_id", "created_at"):
            oldest[run_id] = min(at, oldest.get(run_id, at))
    RunSummary.objects.update(waiting_since=None)
    runs = [RunSummary(run_id=run_id, waiting_since=at) for run_id, at in oldest.items()]
    RunSummary.objects.bulk_update(runs, ["waiting_since"], batch_size=2_000)


def open_oldest(count: int) -> None:
    """The `count` oldest dead letters and conflicts open, whatever the draw made them: a store
    of 200 runs opens about 30 of each, fewer than a page of the API's 50 or the navigation's
    count to 100, so that its open pages showed fewer items than a larger store's."""
    for model in (DeadLetter, Conflict):
        oldest = model.objects.order_by("position").values("pk")[:count]
        model.objects.filter(pk__in=oldest).update(status="open")
    waiting_since()


def late(size: int, limit: int) -> int:
    """Where a late page of `limit` starts among `size` items: 90% of the way in, or the last
    whole page when that is nearer the end; after the first item where there are fewer than
    a page and one (bench/runs_pages.py --sizes 50,100 asked for the item at -1)."""
    return max(1, min(size * 9 // 10, size - limit))


def cursor_of(size: int, sort: str, limit: int) -> run_pages.Cursor:
    """The cursor the runs list's late page in `sort`'s order is asked after: the run before
    its first."""
    key = listing.SORTS[sort]
    before = RunSummary.objects.order_by(*key.order())[late(size, limit) - 1]
    return run_pages.Cursor(sort, getattr(before, key.column), before.run_id)


def before_of(items: QuerySet[Any], limit: int) -> int:
    """The `before` a queue's late page of `limit` (newest first) is asked with, as its Older
    link asks: the position of the item above its first."""
    ordered = items.order_by("-position")
    count = ordered.count()
    return int(ordered[late(count, limit) - 1].position)


def with_forks(size: int, forks: int) -> set[str]:
    """`size` runs stored, `forks` of them forks of the support desk made in the last week,
    each of a run started 20 days before (so that no filter of a team or a week keeps a fork
    in its parent's groups); the forks' ids. What /metrics's look-up of the chosen forks is
    measured on (bench/metrics_forks.py, and the test that holds it to its index)."""
    runs = runs_of(size, random.Random(size))
    parent = runs[0]
    parent.started_at = NOW - timedelta(days=20)
    parent.started_on = parent.started_at.date()
    for n, fork in enumerate(runs[1 : forks + 1]):
        fork.parent_id, fork.team = parent.run_id, "support-desk"
        fork.started_at = NOW - timedelta(days=2, hours=n)
        fork.started_on = fork.started_at.date()
    RunSummary.objects.bulk_create(runs, batch_size=2_000)
    return {fork.run_id for fork in runs[1 : forks + 1]}
