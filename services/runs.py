"""Starting a run and steering it: what the pages, the API and the commands ask of a run.

`start_run` records the run's TeamStarted and enqueues its first step; `interrupt` asks it to
stop at its next turn boundary and `resume` lifts that stop; `status_of` reads where a run is
from its journal. Each refusal is a typed RunError (dashboard/errors.py answers each with its
status). The steps themselves are driven on the workers (services/steps.py).
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.http import Http404

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime import flight, status, streams
from runtime.events import ResumeRequested, StopRequested, TeamStarted
from runtime.journal import Recorded, WrongExpectedVersion
from runtime.openai_client import OpenAIClient
from runtime.openai_settings import ModelConfigError
from runtime.team import FlightConfig
from services import local_model, queue, run_cap, verdicts
from services.asked import named
from services.control import Control, stalled
from services.steps import sandbox

NO_ENDPOINT = (
    "no OpenAI-compatible endpoint is configured: set MINUTES_MODEL_BASE_URL and "
    "MINUTES_MODEL where the workers run, or use the scripted backend"
)


def endpoint_unusable() -> str | None:
    """Why a run on the `endpoint` backend would fail at its first step here, or None: no URL,
    one no request could be made to (not http(s), no host, a port that is no number), or no
    model name. Asked where the run is asked for (the form, the API, a fork, `demo --model
    endpoint`), because at its first step it would fail three times and wait in the
    dead-letter queue, its reason read by whoever looks there (or, a URL with no host, be
    waited out as an endpoint down for a quarter of an hour first)."""
    if not settings.MODEL_BASE_URL:
        return NO_ENDPOINT
    try:
        # The check the workers' client makes (runtime/openai_client.py), on what they read.
        OpenAIClient.from_env(
            {**settings.MODELS, "MINUTES_MODEL_BASE_URL": settings.MODEL_BASE_URL}
        )
    except ModelConfigError as exc:
        return f"{exc}; set it where the workers run, or use the scripted backend"
    return None


class RunError(Exception):
    """A run cannot be started or changed as asked; the message says why."""


class RunNotFound(RunError, Http404):
    """No run has this id (a page or an endpoint answers 404)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"no run {named(run_id)}")


class RunFinished(RunError):
    """The run has reached its verdict: nobody may stop or resume it any more."""

    def __init__(self, run_id: str, verdict: str) -> None:
        super().__init__(f"run {run_id} has already finished ({verdict})")


class RunImported(RunFinished):
    """The run was imported from a file: nothing here drives it, so nobody stops or resumes it."""

    def __init__(self, run_id: str) -> None:
        RunError.__init__(self, f"run {run_id} was imported from a file: nothing here drives it")


class NothingToChange(RunError):
    """The steering asked for would change nothing (a resume of a run driven with no stop to
    lift, a second stop, either of a run waiting on its dead letter or its parked conflict):
    refused, nothing written.
    `how` says where the run stands and what would move it."""

    def __init__(self, run_id: str, how: str) -> None:
        super().__init__(f"run {run_id} {how}: nothing was changed")


# Where a dead-lettered run stands, for both steerings: a person's decision moves it.
ON_A_DEAD_LETTER = (
    "waits for a decision on its dead letter (retry or discard it in the dead-letter queue)"
)


# Where a run waiting on its parked conflict stands: over as far as driving goes (its verdict
# is in), yet not "finished" to the person asking; a decision on the conflict settles it.
ON_A_CONFLICT = (
    "waits for a person's decision on its parked conflict (decide it in the conflict queue)"
)


class RunNotResumable(RunError):
    """The run's recorded settings cannot be driven here (they name another place on disk)."""


class ReplayTooLong(RunError):
    """The run has more events than a web request replays (settings.REPLAY_MAX_EVENTS); the
    message says how to replay it on the command line instead."""

    def __init__(self, run_id: str, events: int, bound: int) -> None:
        super().__init__(
            f"run {run_id} has {events} events, more than the {bound} a replay from this page "
            f"checks; replay it on the command line: python manage.py export_journal {run_id} "
            f"> {run_id}.jsonl && python -m runtime replay {run_id}.jsonl"
        )


class KeyReused(RunError):
    """A start (or fork) sent with an idempotency key that began a run asked otherwise
    (services/keys.py): nothing is written; the message names the run and what differs."""

    def __init__(self, run_id: str, differ: list[str]) -> None:
        super().__init__(
            f"this key began run {run_id} with other settings ({', '.join(differ)}): send the "
            "same request again to be answered that run, or use another key for a new one"
        )


class KeyTaken(RunError):
    """The run an idempotency key names is not the requester's to be answered: imported from a
    file, begun by someone else, or begun without a key (services/keys.py). Nothing is written
    (a 409): another key names another run."""

    def __init__(self, run_id: str) -> None:
        super().__init__(
            f"this key names run {run_id}, a run you did not begin: choose another key "
            "(nothing was written)"
        )


class ModelUnavailable(RunError):
    """The run asks for a model that is not serving here (the local model server is down or
    not installed); the message says how to start it. Nothing was recorded."""


class AtCapacity(RunError):
    """The person has as many live runs as settings.RUNS_PER_PERSON lets one have at once
    (services/run_cap.py): nothing is written (a 429). The message names the cap, how many
    live runs they have and the oldest few, and how to go on."""

    def __init__(self, by: str, cap: int, live: run_cap.Live, places: int = 1) -> None:
        more = live.count - len(live.oldest)
        ids = ", ".join(live.oldest) + (f" and {more} more" if more > 0 else "")
        needs = f"; this start needs {places} places (the run and its baseline)" * (places > 1)
        super().__init__(
            f"{named(by)} has {live.count} live run{'s' * (live.count != 1)} (running, "
            f"interrupted or dead-lettered: {ids}), and one person may have at most {cap} at "
            f"once (MINUTES_RUNS_PER_PERSON){needs}. Nothing was started. To go on: wait for "
            "one to finish, end a dead-lettered one (discard its letter in the dead-letter "
            "queue), or resume an interrupted one to its end (a stopped run keeps its place); "
            "or ask an operator to raise MINUTES_RUNS_PER_PERSON (0: no cap)"
        )


def start_run(team: str, scenario: str | None, *, by: str = "operator", **settings_: Any) -> str:
    """Record the run's TeamStarted and enqueue its first step; returns the run id. No
    scenario: the team's own first one."""
    return start(team, scenario, by=by, **settings_).run_id


def start(
    team: str,
    scenario: str | None,
    *,
    by: str,
    run_id: str = "",
    asked: dict[str, Any] | None = None,
    cap: int = 0,
    places: int = 1,
    **settings_: Any,
) -> Begun:
    """start_run's work: the run's id, and whether this call began it. `run_id` given (a
    key's, services/keys.py), with `asked` (what the request itself asked for): a run begun
    under it already is answered (begun_before) before anything is planned or checked.
    `cap` (a person's ask: settings.RUNS_PER_PERSON; 0 none): AtCapacity when `by` has so many
    live runs that `places` more would pass it (begin)."""
    if run_id and (found := begun_before(run_id, by, asked)) is not None:
        return found
    run_id = run_id or flight.new_run_id()
    try:
        config = flight.plan(
            team,
            scenario,
            run_id,
            park=True,
            started_by=by,
            sandbox=sandbox().required,
            **settings_,
        )
    except flight.FlightError as exc:
        raise RunError(str(exc)) from None
    return Begun(run_id, begin(run_id, config, asked, cap=cap, places=places))


@dataclass(frozen=True)
class Begun:
    run_id: str
    new: bool  # False: begun before under this id (a keyed start sent again)


def begin(
    run_id: str,
    config: FlightConfig,
    asked: dict[str, Any] | None = None,
    cap: int = 0,
    places: int = 1,
) -> bool:
    """Record a planned run's TeamStarted (with `asked`, a keyed start's request) and enqueue
    its first step: True. False, with nothing written, when a keyed start asked the same
    began it first (two sent at once); KeyReused or KeyTaken when the run there is not to be
    answered (begun_before). With a `cap`, AtCapacity and nothing written when its starter
    has too many live runs: counted under their lock, with the append (services/run_cap.py)."""
    if "local" in (config.model, *config.models.values()):
        # Checked, never started, here: a request must not wait minutes on a model server
        # (the demo command or a worker starts it), and no run is recorded that no model serves.
        why = local_model.unavailable()
        if why:
            raise ModelUnavailable(why)
    started = TeamStarted(
        run_id=run_id,
        team=config.team,
        scenario=config.scenario,
        task=config.task,
        config=config.model_dump(mode="json"),
        asked=as_recorded(asked),
    )
    journal = DjangoJournal()
    by = config.started_by or ""
    try:
        with run_cap.one_start_at_a_time(by) if cap > 0 else nullcontext():
            # A keyed start whose run is begun already is answered that run below: no place.
            if cap > 0 and not journal.version(streams.journal(run_id)):
                make_room(by, cap, places)
            journal.append(streams.journal(run_id), [started], 0)
    except WrongExpectedVersion:
        if begun_before(run_id, by, asked) is None:
            raise KeyTaken(run_id) from None  # (its stream holds no first event to read)
        return False  # its first step was enqueued by the start that began it
    projection.catch_up()
    queue.advance(run_id)
    return True


def make_room(by: str, cap: int, places: int = 1) -> None:
    """AtCapacity, with nothing written, when `by` has so many live runs that `places` new
    ones would take them past `cap` (0: no cap). Every way a new run is begun for a person
    asks it (a start, a fork, a baseline), under run_cap.one_start_at_a_time(by) and just
    before the run's first events are appended, so two at once are counted one after the
    other. A resume or a letter's retry does not: the run it drives on is live already
    (services/run_cap.py)."""
    if cap <= 0:
        return
    projection.catch_up()  # a start committed before this one is counted
    if (live := run_cap.full(by, cap, places)) is not None:
        raise AtCapacity(by, cap, live, places)


def begun_before(run_id: str, by: str, asked: dict[str, Any] | None) -> Begun | None:
    """The run a keyed start names (`run_id`, the key's) when it is begun already: answered
    (new False) when it was asked what `asked` asks (the request's own fields, never what the
    server made of them: its sandbox, the scenario's presets, a model server up or down, any of
    which may have changed since), KeyReused naming the fields that differ when not. KeyTaken
    when the run there is not `by`'s to be answered: imported from a file (an import keeps its
    file's ids), begun by someone else, or begun by no keyed start. None when there is none."""
    journal = DjangoJournal()
    first = journal.first(streams.journal(run_id))
    if first is None:
        return None
    begun = first.event
    if (
        asked is None
        or not isinstance(begun, TeamStarted)
        or begun.asked is None
        or begun.config.get("started_by") != by
        or journal.version(streams.imported(run_id))
    ):
        raise KeyTaken(run_id)
    if differ := differences(begun.asked, as_recorded(asked) or {}):
        raise KeyReused(run_id, differ)
    projection.catch_up()
    return Begun(run_id, False)  # its first step was enqueued by the start that began it


def as_recorded(asked: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a request asked for as its TeamStarted holds it: JSON (a tuple a list)."""
    return None if asked is None else json.loads(json.dumps(asked, default=str))


def differences(had: dict[str, Any], wants: dict[str, Any]) -> list[str]:
    """The fields in which a start asks for another run than the one a request with the same
    key began, by their names; a field left out is one left to the scenario. Another team
    is named alone: its scenario and settings are another team's."""
    if had.get("team") != wants.get("team"):
        return ["team"]
    return [k for k in sorted(had.keys() | wants.keys()) if had.get(k) != wants.get(k)]


def steerable(run_id: str) -> str:
    """The run's status, when a person may stop or resume it; else the refusal that says why:
    imported (nothing here drives it), waiting on a conflict, over, or dead-lettered (a step
    would stop at the open letter again: its retry or discard is what moves it)."""
    state = status_of(run_id)
    if state == status.IMPORTED:
        raise RunImported(run_id)
    if state == status.WAITING:
        raise NothingToChange(run_id, ON_A_CONFLICT)
    if status.is_terminal(state):
        raise RunFinished(run_id, state)
    if state == status.DEAD_LETTERED:
        raise NothingToChange(run_id, ON_A_DEAD_LETTER)
    return state


def interrupt(run_id: str, by: str, reason: str = "") -> None:
    """Ask the run to stop at its next turn boundary. Refused, with nothing written, where the
    stop would change nothing: a run interrupted already or asked to stop already, and a
    dead-lettered run (its letter's discard ends it; a stop would only end the retried run).
    An interrupted run whose resume is on its way may be stopped: the stop cancels the resume.
    The request is appended at the control stream's version read (two stops at once record
    one)."""
    control = Control(run_id)
    for _ in range(ATTEMPTS):
        state = steerable(run_id)
        latest, version = control.requests()
        interrupted = state == status.INTERRUPTED
        if interrupted and not (
            latest is not None
            and isinstance(latest.event, ResumeRequested)
            and control.resume_on_its_way(latest, interrupted=True)
        ):
            raise NothingToChange(run_id, "is interrupted already (resume it to go on)")
        # An interrupted run with a resume on its way may be stopped again: the stop cancels
        # the resume, as a resume cancels a stop the run has not reached.
        if latest is not None and isinstance(latest.event, StopRequested):
            raise NothingToChange(run_id, f"was asked to stop already, {asked(latest)}")
        try:
            control.request_stop(by, reason, at=version)
        except WrongExpectedVersion:
            continue  # another request came in between: decide again on what it says
        return
    raise NothingToChange(run_id, MOVING)


def resume(run_id: str, by: str, reason: str = "") -> None:
    """Lift a stop and drive the run on from its journal.

    A running run may be resumed only when there is something to do: a stop it has not reached
    yet (the resume cancels it), or a stall (the resume queues it again, as the reconciler
    would). Otherwise NothingToChange, and nothing is written or sent; so is a resume while
    another is on its way (`Control.resume_on_its_way`, read from the control stream: the
    status reads interrupted until the step it sent writes RunResumed). The request is appended
    at the control stream's version read: two resumes at once record one.
    """
    state = steerable(run_id)
    try:  # its settings name places on disk: checked before any worker acts on them
        first = DjangoJournal().first(streams.journal(run_id))  # its settings: not the whole run
        flight.recorded_config([first.event] if first else [], run_id)
    except flight.FlightError as exc:
        raise RunNotResumable(str(exc)) from None
    control = Control(run_id)
    for _ in range(ATTEMPTS):
        latest, version = control.requests()
        interrupted = state == status.INTERRUPTED
        if (
            latest is not None
            and isinstance(latest.event, ResumeRequested)
            and control.resume_on_its_way(latest, interrupted)
        ):
            # Read from the control stream, not the status: an interrupted run reads
            # interrupted until the step the first resume sent writes its RunResumed.
            on_its_way = f"has a resume on its way already, asked {asked(latest)}"
            raise NothingToChange(run_id, on_its_way)
        stop = latest is not None and isinstance(latest.event, StopRequested)
        if not interrupted and not stop and not is_stalled(run_id):
            # A step drives it or is on its way: a resume would only add a request to its
            # journal and a second message for a step that is coming anyway.
            raise NothingToChange(run_id, "is already running")
        try:
            control.request_resume(by, reason, at=version)
        except WrongExpectedVersion:
            state = status_of(run_id)  # another request came in between: decide again
            if status.is_terminal(state) or state == status.DEAD_LETTERED:
                raise NothingToChange(run_id, f"is {status.label(state)} now") from None
            continue
        queue.advance(run_id)
        return
    raise NothingToChange(run_id, MOVING)


# Reads of the control stream a stop or resume makes before it gives up: each lost race means
# another request (or a failed step, a stall noted) came in between, and it decides again.
ATTEMPTS = 5
MOVING = "had its requests moving under this one (others kept asking): ask again"


def asked(request: Recorded) -> str:
    """ "by ann at 2026-12-01 10:04:05 UTC (her reason)": who asked for a request, and when."""
    e = request.event
    when = datetime.fromtimestamp(e.t, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    by, why = getattr(e, "by", "?"), getattr(e, "reason", "")
    return f"by {by} at {when}" + (f" ({why})" if why else "")


def is_stalled(run_id: str) -> bool:
    """Whether nobody drives the running run and no step is on its way to it (control.stalled,
    the same reading the pages show as "stalled since")."""
    started = RunSummary.objects.filter(run_id=run_id).values_list("started_at", flat=True).first()
    return run_id in stalled({run_id: started.timestamp() if started else 0.0})


def replay(run_id: str) -> flight.ReplayReport:
    """Re-run the run from its journal alone, into a scratch journal: whether it reproduces
    every event. A run whose journal cannot be flown here (no TeamStarted first, settings that
    name another place) is refused, not a server error; so is a run longer than a web request
    should fly (ReplayTooLong, naming the command that replays it). The verdict is kept (the
    shared cache) for as long as nothing is added to the run's journal."""
    bound = settings.REPLAY_MAX_EVENTS
    events = RunSummary.objects.filter(run_id=run_id).values_list("event_count", flat=True)
    if bound and events and events[0] > bound:
        raise ReplayTooLong(run_id, events[0], bound)
    # The same journal replays the same way: a second check of a run nothing was added to is
    # answered from the first, in any web process (services/verdicts.py).
    journal = verdicts.journal_of(run_id)
    if journal and (known := verdicts.kept(journal)) is not None:
        return known
    try:
        report = flight.replay(DjangoJournal(), run_id)
    except flight.FlightError as exc:
        raise RunNotResumable(str(exc)) from None
    if journal:
        verdicts.keep(journal, report)
    return report


def status_of(run_id: str) -> str:
    """Where the run is (runtime/status.py's vocabulary): its summary's status once the
    projector has caught up with the journal, so the same fold the list and the pages read
    (views.Summary, over every stream of the run), read from one row rather than folded again
    over the whole run at every stop and resume."""
    found = projection.summary_now(run_id, "status")
    if found is None:
        raise RunNotFound(run_id)
    return str(found)
