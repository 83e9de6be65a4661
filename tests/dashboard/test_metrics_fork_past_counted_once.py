"""A fork's copied past is counted once in the metrics of any runs a filter chooses.

The rollup takes a fork's copied tokens and cost off its share, since its parent's share counts
them; a filter that kept the fork and left the parent out (a date range, a model) counted them
under neither. A chain: P, F1 forked from P, F2 forked from F1 (each on its own day; P and F2 on
one model, F1 on another). Journals, in tokens:

    P  = p[0:100]                       (100)
    F1 = p[0:60]  + f1[0:50]            (110, 60 copied)
    F2 = p[0:60]  + f1[0:20] + f2[0:30] (110, 80 copied)

so any selection's tokens are those of the union of its journals. Cost is tokens / 100, and
coordination and work tokens are half of them each; only F2 is a verified success. Every other
figure the rollup sums (claims, hand-offs, deliveries, seconds waited...) is as many as the
tokens, and a fork copied as many of each as of its tokens.
"""

from __future__ import annotations

from datetime import date

import pytest

from journal_store import metrics_days
from journal_store.models import MetricsDay, RunSummary
from runtime.metric_sums import SUMMED
from services import shared_past
from services.metrics import MetricsFilter, across

pytestmark = pytest.mark.django_db

DAY = {"P": date(2026, 11, 1), "F1": date(2026, 11, 2), "F2": date(2026, 11, 3)}
CHAIN = [  # run, parent, model, tokens, copied
    ("P", "", "m-a", 100, 0),
    ("F1", "P", "m-b", 110, 60),
    ("F2", "F1", "m-a", 110, 80),
]


@pytest.fixture
def chain(db) -> None:
    for run_id, parent, model, tokens, copied in CHAIN:
        RunSummary.objects.create(
            run_id=run_id,
            parent_id=parent,
            team="repo-fix",
            scenario="first-flight",
            model=model,
            status="finished",
            stage="complete",
            started_on=DAY[run_id],
            verified=run_id == "F2",
            tokens=tokens,
            coord_tokens=tokens // 2,
            work_tokens=tokens // 2,
            cost=tokens / 100,
            inherited_tokens=copied,
            inherited_coord_tokens=copied // 2,
            inherited_work_tokens=copied // 2,
            inherited_cost=copied / 100 if parent else None,
            # The figures' columns: every count as many as the tokens, the seconds too (a
            # conflict waited a second each), and a fork's copied figures as many as its copied.
            **{name: tokens for name in SUMMED if name != "conflict_wait"},
            conflict_latency=1.0,
            copied_figures={name: copied for name in SUMMED} if parent else {},
        )
    metrics_days.refill(RunSummary.objects, MetricsDay.objects)


def totals(**chosen) -> dict:
    return across(MetricsFilter(**chosen)).totals


@pytest.mark.parametrize(
    ("chosen", "tokens"),
    [
        ({}, 180),  # all three: 100 + 50 + 30
        ({"until": DAY["P"]}, 100),
        ({"since": DAY["F1"], "until": DAY["F1"]}, 110),  # the fork alone: all its journal
        ({"since": DAY["F2"]}, 110),  # the fork of the fork alone
        ({"until": DAY["F1"]}, 150),  # P and F1
        ({"since": DAY["F1"]}, 140),  # F1 and F2: p[0:60] once
        ({"model": "m-a"}, 150),  # P and F2: F1's 20 that F2 copied, and p in full
        ({"model": "m-b"}, 110),
    ],
)
def test_a_selection_counts_the_past_its_forks_copied_once(chain, chosen, tokens):
    found = totals(**chosen)
    assert found["tokens"] == tokens
    assert (found["coord_tokens"], found["work_tokens"]) == (tokens // 2, tokens // 2)
    assert found["cost"] == pytest.approx(tokens / 100)
    assert {name: found[name] for name in SUMMED} == dict.fromkeys(SUMMED, tokens)


def test_a_verified_forks_coordination_counts_its_copied_past(chain):
    # F2's success took its whole journal's coordination, whether or not P and F1 are chosen.
    assert totals()["coordination_cost_per_verified_success"] == 55
    assert totals(since=DAY["F2"])["coordination_cost_per_verified_success"] == 55


def test_each_period_and_team_counts_as_its_own_filter_would(chain):
    found = across(MetricsFilter())
    assert found.period == "day"
    by_day = {p["start"]: p["tokens"] for p in found.periods}
    for run_id, day in DAY.items():
        alone = 100 if run_id == "P" else 110
        assert by_day[day] == totals(since=day, until=day)["tokens"] == alone
    assert [t["tokens"] for t in found.teams] == [180]
    assert [t["handoffs"] for t in found.teams] == [180]
    assert {p["start"]: p["human_wait"] for p in found.periods} == by_day
    assert across(MetricsFilter(since=DAY["F1"])).teams[0]["tokens"] == 140


def test_two_forks_of_one_run_count_the_longer_of_their_copied_pasts(db):
    # P = p[0:100]; A = p[0:60] + a[0:50]; B = p[0:90] + b[0:10]: A's copy lies within B's.
    for run_id, parent, day, tokens, copied in [
        ("P", "", 1, 100, 0),
        ("A", "P", 2, 110, 60),
        ("B", "P", 3, 100, 90),
    ]:
        RunSummary.objects.create(
            run_id=run_id,
            parent_id=parent,
            status="finished",
            stage="complete",
            started_on=date(2026, 11, day),
            tokens=tokens,
            inherited_tokens=copied,
        )
    metrics_days.refill(RunSummary.objects, MetricsDay.objects)
    assert totals(since=date(2026, 11, 2))["tokens"] == 90 + 50 + 10
    assert totals()["tokens"] == 100 + 50 + 10


def test_a_chain_read_on_one_day_counts_a_verified_forks_copied_coordination(db):
    # P -> F1 -> F2 all on one day and team, only F1 verified: F1 is read (its parent is not
    # verified), F2 is not (its parent holds all it holds above it in every group).
    for run_id, parent, _model, tokens, copied in CHAIN:
        RunSummary.objects.create(
            run_id=run_id,
            parent_id=parent,
            team="repo-fix",
            status="finished",
            started_on=DAY["P"],
            verified=run_id == "F1",
            tokens=tokens,
            coord_tokens=tokens // 2,
            work_tokens=tokens // 2,
            inherited_tokens=copied,
            inherited_coord_tokens=copied // 2,
            inherited_work_tokens=copied // 2,
        )
    metrics_days.refill(RunSummary.objects, MetricsDay.objects)
    assert set(shared_past.family(MetricsFilter().runs()).runs) == {"P", "F1"}
    found = across(MetricsFilter())
    for figures in (found.totals, found.teams[0], found.periods[0]):
        assert figures["tokens"] == 180
        assert figures["coordination_cost_per_verified_success"] == 55  # F1's whole journal's


def test_runs_whose_parents_come_back_to_them_are_summed_once_each(db):
    # Journals may say anything: A forked from B, B from A, C from itself.
    for run_id, parent in [("A", "B"), ("B", "A"), ("C", "C")]:
        RunSummary.objects.create(
            run_id=run_id,
            parent_id=parent,
            status="finished",
            started_on=DAY["P"],
            tokens=100,
            inherited_tokens=60,
        )
    metrics_days.refill(RunSummary.objects, MetricsDay.objects)
    found = across(MetricsFilter())
    assert found.totals["tokens"] == 3 * 40
    assert found.totals["coordination_cost_per_verified_success"] is None


def test_a_chain_above_its_parent_is_read_in_one_query_whatever_its_depth(
    db, django_assert_max_num_queries
):
    # P -> F1 -> ... -> F12, each a day after the one above, each knowing its chain (lineage):
    # only F12 chosen, every run above it is read at once, not a query per level.
    above, chain = "P", []
    RunSummary.objects.create(run_id="P", status="finished", started_on=date(2026, 10, 1))
    for depth in range(1, 13):
        run_id = f"F{depth}"
        RunSummary.objects.create(
            run_id=run_id,
            parent_id=above,
            status="finished",
            started_on=date(2026, 10, 1 + depth),
            tokens=100 + 10 * depth,
            inherited_tokens=100 + 10 * depth - 20,
            lineage=list(chain),
        )
        chain.append(
            {
                "run": run_id,
                "parent": above,
                "tokens": 100 + 10 * depth - 20,
                "coord_tokens": 0,
                "work_tokens": 0,
                "figures": {},
            }
        )
        above = run_id
    metrics_days.refill(RunSummary.objects, MetricsDay.objects)
    chosen = MetricsFilter(since=date(2026, 10, 13))
    with django_assert_max_num_queries(5):  # the rollup, the fork, the runs above (and chosen)
        family = shared_past.family(chosen.runs())
    assert set(family.runs) == {"P", *(f"F{d}" for d in range(1, 13))}
    assert across(chosen).totals["tokens"] == 220


def steps_of(run) -> int:
    """The SQLite virtual machine's instructions `run` costs: the work its queries do, which no
    clock's noise moves."""
    from django.db import connection

    counted = [0]

    def tick() -> int:
        counted[0] += 1
        return 0

    connection.ensure_connection()
    connection.connection.set_progress_handler(tick, 1)
    try:
        run()
    finally:
        connection.connection.set_progress_handler(None, 1)
    return counted[0]


def test_finding_the_chosen_forks_reads_the_forks_not_every_run(chain):
    """The forks were found by `parent_id <> ''`, which no index serves: every page of the
    metrics read every run of the store (9.3 ms of 20 at 20,000 runs, 2.4 of 6.4 at 100)."""

    def plain(count: int, start: int) -> None:
        RunSummary.objects.bulk_create(
            RunSummary(
                run_id=f"plain-{start + i}",
                team="repo-fix",
                status="finished",
                stage="complete",
                started_on=DAY["P"],
            )
            for i in range(count)
        )

    plain(100, 0)
    few = steps_of(lambda: shared_past.family(MetricsFilter().runs()))
    plain(2_000, 100)
    many = steps_of(lambda: shared_past.family(MetricsFilter().runs()))
    assert many < 2 * few, (few, many)
