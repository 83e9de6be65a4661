"""The metrics page's sums, made in SQL over the runs read model, equal the same sums made in
Python over each run's metrics view (the fold over its journal), on SQLite and PostgreSQL; and
the filters choose the runs they name."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime import folds, views
from runtime.events import DeadLetterDiscarded, DeadLettered
from runtime.journal import append_next
from runtime.jsonl import JsonlJournal
from runtime.metrics import metrics
from services.metrics import MetricsFilter, across
from tests.coordination import drills
from tests.journal_store.conftest import on_every_backend
from tests.journal_store.test_projection_matches_views import store

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "journals"
FLOWN = [
    ("repo-fix", "first-flight"),
    ("repo-fix", "reject-loop"),
    ("support-desk", "double-refund"),
    ("support-desk", "lost-update"),  # parks a conflict for a person
    ("support-triage", "broken-policy"),
    ("support-triage", "refund-saga"),
]


def stored_runs(fly_team, alias: str) -> list[str]:
    for path in sorted(FIXTURES.glob("*.jsonl")):
        store(alias, JsonlJournal(path).read_all())
    for team, scenario in FLOWN:
        store(alias, JsonlJournal(fly_team(scenario, team=team).path).read_all())
    # Dead letters come from the workers, not from a flight: one, decided a minute later.
    loop = fly_team("reject-loop").run_id
    lettered = DeadLettered(run_id=loop, letter_id="dl-1", reason="poison step", t=1000.0)
    decided = DeadLetterDiscarded(run_id=loop, letter_id="dl-1", by="rev", reason="x", t=1060.0)
    append_next(DjangoJournal(alias), f"run-{loop}", [lettered, decided])
    # Coordination drills: a deadlock the wait-for graph broke, a commitment left open.
    for drill in ("lease-pair", "forgetful-owner"):
        store(alias, drills.flown(drill).records)
    projection.catch_up(using=alias)
    return list(RunSummary.objects.using(alias).values_list("run_id", flat=True))


def in_python(alias: str, run_ids: list[str]) -> dict[str, dict[str, float | int | None]]:
    """Per team and in all ("*"): the sums and rates, from each run's folds over its journal."""
    groups: dict[str, dict[str, float]] = {}
    journal = DjangoJournal(alias)
    for run_id in run_ids:
        records = journal.read_run(run_id)
        m = metrics(records)
        team = folds.run(views.Summary(), records)["team"] or "(none)"
        overhead, latency = m["coordination_overhead_ratio"], m["conflict_resolution_latency"]
        figures = {
            "runs": 1,
            "verified": int(m["coordination_cost_per_verified_success"]["value"] is not None),
            "tokens": views.bill(records)["total"]["tokens"],
            "coord": overhead["coordination_tokens"],
            "work": overhead["work_tokens"],
            "claims": m["ownership_conflict_rate"]["claims"],
            "contested": m["ownership_conflict_rate"]["contested"],
            "handoffs": m["handoff_failure_rate"]["handoffs"],
            "failed": m["handoff_failure_rate"]["failed"],
            "checks": m["verification_independence_rate"]["verifications"],
            "independent": m["verification_independence_rate"]["independent"],
            "with_conflict": int(latency["resolved"] + latency["open"] > 0),
            "with_dead_letter": int(latency["dead_letters"] > 0),
            "human_wait": latency["waiting_for_people_seconds"],
            "waits": m["deadlock_rate"]["waits"],
            "deadlocks": m["deadlock_rate"]["deadlocks"],
            "commitments": m["commitment_orphan_rate"]["total"],
            "orphaned": m["commitment_orphan_rate"]["orphaned"],
        }
        for key in (team, "*"):
            group = groups.setdefault(key, dict.fromkeys(figures, 0))
            for name, value in figures.items():
                group[name] += value

    def rate(part: float, whole: float) -> float | None:
        return round(part / whole, 4) if whole else None

    return {
        key: {
            "runs": g["runs"],
            "verified": g["verified"],
            "tokens": g["tokens"],
            "coordination_overhead_ratio": rate(g["coord"], g["work"]),
            "ownership_conflict_rate": rate(g["contested"], g["claims"]),
            "handoff_failure_rate": rate(g["failed"], g["handoffs"]),
            "verification_independence_rate": rate(g["independent"], g["checks"]),
            "conflict_run_rate": rate(g["with_conflict"], g["runs"]),
            "dead_letter_run_rate": rate(g["with_dead_letter"], g["runs"]),
            "tokens_per_verified_success": round(g["tokens"] / g["verified"], 1)
            if g["verified"]
            else None,
            "human_wait": round(g["human_wait"], 3),
            "deadlock_rate": rate(g["deadlocks"], g["waits"]),
            "commitment_orphan_rate": rate(g["orphaned"], g["commitments"]),
        }
        for key, g in groups.items()
    }


def in_sql(found) -> dict[str, dict[str, float | int | None]]:
    names = (
        "runs",
        "verified",
        "tokens",
        "coordination_overhead_ratio",
        "ownership_conflict_rate",
        "handoff_failure_rate",
        "verification_independence_rate",
        "conflict_run_rate",
        "dead_letter_run_rate",
        "tokens_per_verified_success",
        "human_wait",
        "deadlock_rate",
        "commitment_orphan_rate",
    )
    out = {"*": {n: found.totals[n] for n in names}}
    for team in found.teams:
        out[team["team"]] = {n: team[n] for n in names}
    return out


@on_every_backend()
def test_the_sums_in_sql_equal_the_sums_of_the_runs_folds(fly_team, alias):
    run_ids = stored_runs(fly_team, alias)
    found = across(MetricsFilter(), using=alias)
    expected = in_python(alias, run_ids)
    assert in_sql(found) == expected
    # Enough variety that the equality says something: several teams, a verified success,
    # coordination tokens, a run that parked a conflict and one that dead-lettered work.
    assert len(found.teams) >= 4
    assert found.totals["verified"] >= 1 and found.totals["coord_tokens"] > 0
    assert found.totals["with_conflict"] >= 1 and found.totals["with_dead_letter"] == 1
    assert found.totals["human_wait"] >= 60.0
    # A deadlock among the waits and an orphaned commitment, and rates other runs measured at 0.
    assert found.totals["deadlocks"] >= 1 and found.totals["orphaned"] >= 1
    assert 0 < found.totals["deadlock_rate"] < 1 and 0 < found.totals["commitment_orphan_rate"] < 1
    # Per period, the runs add up to every run that has a start time.
    started = RunSummary.objects.using(alias).exclude(started_at=None).count()
    assert sum(p["runs"] for p in found.periods) == started
    # Every day from the first to the last, a day without runs too (a gap in time shows).
    starts = [p["start"] for p in found.periods]
    assert found.period == "day" and starts == [
        starts[0] + timedelta(days=n) for n in range(len(starts))
    ]


@on_every_backend()
def test_the_filters_choose_the_runs_they_name(fly_team, alias):
    stored_runs(fly_team, alias)
    runs = RunSummary.objects.using(alias)
    desk = across(MetricsFilter(team="support-desk"), using=alias)
    assert desk.totals["runs"] == runs.filter(team="support-desk").count() > 0
    assert [t["team"] for t in desk.teams] == ["support-desk"]
    flown = across(MetricsFilter(scenario="reject-loop"), using=alias)
    assert flown.totals["runs"] == 1
    scripted = across(MetricsFilter(model="scripted"), using=alias)
    assert scripted.totals["runs"] == runs.filter(model="scripted").count() > 0
    newest = runs.exclude(started_at=None).order_by("-started_at").first()
    day = newest.started_at.date()
    on_the_day = runs.filter(
        started_at__date__gte=day, started_at__date__lt=day + timedelta(1)
    ).count()
    assert across(MetricsFilter(since=day, until=day), using=alias).totals["runs"] == on_the_day
    before = across(MetricsFilter(until=day - timedelta(1)), using=alias)
    assert before.totals["runs"] == runs.filter(started_at__date__lt=day).count()
    nothing = across(MetricsFilter(team="solo", scenario="first-flight"), using=alias)
    assert nothing.totals["runs"] == 0 and nothing.teams == [] and nothing.periods == []
