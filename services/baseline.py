"""The single-agent baseline of a team run: start it, linked, and find it again.

The baseline is the `solo` team on the team run's task, template and model
(runtime/baseline.py); its TeamStarted records `baseline_of`, the team run's id, which the
runs' summary keeps (an indexed column) and `baselines_of` finds it by: from the journal's
projection, not from anything kept in memory.
"""

from __future__ import annotations

from django.db.models import F

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime import baseline, flight, streams
from runtime.events import RunForked
from services import runs
from services.steps import sandbox


class NoBaseline(runs.RunError):
    """This run cannot have a single-agent baseline (a solo run, a team without a repository
    template, a baseline itself); the message says which."""


class BaselineNotFound(runs.RunError):
    """The run has no single-agent baseline yet."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id} has no single-agent baseline yet")


def start_baseline(team_run_id: str, by: str, run_id: str = "", cap: int = 0) -> runs.Begun:
    """Record the baseline run of this team run and enqueue its first step: its id, and
    whether this call began it. `run_id` given (a key's, services/keys.py): a baseline begun
    under it already is answered (runs.begun_before), before anything is planned or checked,
    not begun again. `cap` (a person's ask: settings.RUNS_PER_PERSON; 0 none): a baseline is
    a run of its own, so AtCapacity, nothing written, when `by` has no place left for it."""
    asked = {"baseline_of": team_run_id} if run_id else None  # all a baseline is asked
    if run_id and (begun := runs.begun_before(run_id, by, asked)) is not None:
        return begun
    journal = DjangoJournal()
    first = journal.first(streams.journal(team_run_id))  # its settings: not the whole run
    if first is None:
        raise runs.RunNotFound(team_run_id)
    # A fork's caps from its fork point on, which its settings do not hold (runtime/limits.py).
    forked = journal.select(
        "WHERE stream = %s AND kind = %s", [streams.journal(team_run_id), RunForked.kind]
    )
    try:
        team = flight.recorded_config([first.event], team_run_id)
    except flight.FlightError as exc:
        raise NoBaseline(str(exc)) from None
    found = forked[0].event if forked else None
    team = baseline.as_flown(team, found if isinstance(found, RunForked) else None)
    run_id = run_id or flight.new_run_id()
    try:
        config = baseline.plan_baseline(
            team, team_run_id, run_id, park=True, started_by=by, sandbox=sandbox().required
        )
    except flight.FlightError as exc:
        raise NoBaseline(str(exc)) from None
    return runs.Begun(run_id, runs.begin(run_id, config, asked, cap=cap))


def baselines_of(team_run_id: str) -> list[str]:
    """The ids of the baseline runs started for this team run, oldest first (read from the
    runs' summaries: as far as the projection has caught up)."""
    found = RunSummary.objects.filter(baseline_of=team_run_id)
    return list(
        found.order_by(F("started_at").asc(nulls_last=True), "run_id").values_list(
            "run_id", flat=True
        )
    )


def team_run_of(run_id: str) -> str | None:
    """The team run this run is the single-agent baseline of (its summary's `baseline_of`), or
    None: also when this store does not hold that run (a baseline imported without it), which
    a link would not find."""
    linked = RunSummary.objects.filter(run_id=run_id).values_list("baseline_of", flat=True).first()
    if not linked or not RunSummary.objects.filter(run_id=linked).exists():
        return None
    return linked
