"""/api/metrics: the coordination metrics across runs, as the metrics page sums them."""

# No `from __future__ import annotations`: django-ninja reads the annotations at runtime.

from datetime import date, datetime
from typing import Any

from django.http import HttpRequest
from django.utils.timezone import now
from ninja import Router, Schema
from pydantic import Field

from dashboard.api.errors import invalid
from services import metrics

router = Router(tags=["metrics"])


class FiltersOut(Schema):
    team: str = ""
    scenario: str = ""
    model: str = ""
    since: date | None = None
    until: date | None = None


class FiguresOut(Schema):
    """A group of runs' sums, and the rates across them (each a ratio of sums; null when its
    denominator is 0: not measurable for these runs)."""

    runs: int
    verified: int = Field(description="runs the harness verified done (not compensated)")
    tokens: int
    cost: float | None = Field(description="sum of the runs' known costs; null: none priced")
    priced: int = Field(description="runs whose cost is known")
    coord_tokens: int
    work_tokens: int
    verified_coord_tokens: int
    claims: int
    contested: int
    handoffs: int
    failed_handoffs: int
    deliveries: int
    stale_deliveries: int
    files_written: int
    shared_files: int
    reviewed_tasks: int
    looked_at_tasks: int = Field(
        description="livelock_rate's whole: tasks reviewed, and every one that livelocked"
    )
    livelocked_tasks: int
    verifications: int
    independent_verifications: int
    conflicts_resolved: int
    conflicts_open: int
    conflict_wait: float = Field(description="seconds resolved conflicts waited for a person")
    human_wait: float = Field(description="seconds conflicts and dead letters waited")
    dead_letters: int
    letters_open: int = Field(description="of those, still waiting for a person's decision")
    with_conflict: int = Field(description="runs that parked a conflict")
    with_dead_letter: int = Field(description="runs that dead-lettered work")
    waits: int = Field(description="waits for another agent (requests, leases awaited)")
    deadlocks: int = Field(description="cycles of open waits")
    commitments: int = Field(
        description="commitments made (requests taken up, in runs that made none)"
    )
    orphaned: int = Field(description="of those, left open when the run finished")
    coordination_overhead_ratio: float | None
    ownership_conflict_rate: float | None
    conflict_run_rate: float | None
    dead_letter_run_rate: float | None
    stale_message_rate: float | None
    handoff_failure_rate: float | None
    duplicate_work_rate: float | None
    livelock_rate: float | None
    verification_independence_rate: float | None
    deadlock_rate: float | None
    commitment_orphan_rate: float | None
    verified_rate: float | None
    tokens_per_verified_success: float | None = Field(
        description="every run's tokens (failures too) over the verified successes"
    )
    cost_per_verified_success: float | None = Field(
        description="the same in money; null unless every run's cost is known"
    )
    coordination_cost_per_verified_success: float | None
    conflict_resolution_latency: float | None = Field(description="mean seconds")


class PeriodOut(FiguresOut):
    start: date = Field(description="the period's first day (UTC): a day, a Monday, a 1st")


class TeamOut(FiguresOut):
    team: str


class OldestOut(Schema):
    """The undecided review item of the chosen runs that has waited longest."""

    queue: str = Field(description="conflicts or dead_letters")
    id: str = Field(description="the conflict's or the dead letter's id")
    run_id: str
    since: datetime = Field(description="when it was opened (its event's time)")
    waited: float = Field(description="seconds it has waited, as of this answer")


class AcrossOut(Schema):
    filters: FiltersOut
    totals: FiguresOut
    oldest_open: OldestOut | None = Field(
        description="the review item waiting longest for a person; null: none waits"
    )
    period: str = Field(description="the width of each period: day, week or month")
    periods: list[PeriodOut]
    every_period: bool = Field(
        description="true: every period from the first run's to the last run's, those "
        "without runs too; false: more than 120 of them, so only those runs started in"
    )
    teams: list[TeamOut]
    undated: int = Field(
        description="of the runs, those with no start time (a journal written without times): "
        "in the totals and the teams, in no period"
    )


def waited(since: datetime) -> float:
    """Seconds from `since` to now; 0 for a time ahead of this clock (another machine's)."""
    return max(0.0, (now() - since).total_seconds())


@router.get("", response=AcrossOut)
def across_runs(
    request: HttpRequest,
    team: str = "",
    scenario: str = "",
    model: str = "",
    since: str = "",
    until: str = "",
) -> Any:
    """The coordination metrics summed over the runs a team, a scenario, a model and the days
    they started in (`since` and `until` included, YYYY-MM-DD, UTC) choose: in all, per period
    and per team (docs/metrics.md). A value that cannot be used is a 422 naming its field, as
    elsewhere in the API."""
    params = {"team": team, "scenario": scenario, "model": model, "since": since, "until": until}
    try:
        chosen = metrics.MetricsFilter.parse(params)
    except metrics.BadFilter as exc:
        raise invalid("query", exc.problems) from None
    found = metrics.across(chosen)
    oldest = found.oldest_open
    return {
        "filters": chosen.__dict__,
        "totals": found.totals,
        "oldest_open": None if oldest is None else oldest | {"waited": waited(oldest["since"])},
        "period": found.period,
        "periods": found.periods,
        "every_period": found.every_period,
        "teams": found.teams,
        "undated": found.undated,
    }
