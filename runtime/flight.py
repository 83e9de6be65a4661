"""Flying a team: start a run, resume it from its journal, or replay it from its journal alone."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from runtime import fork, git_run, plugins, streams
from runtime.events import (
    DeadLetterDiscarded,
    TeamFinished,
    TeamStarted,
    WorkspacePrepared,
    describe_validation,
)
from runtime.faults import Faults
from runtime.fenced import unfenced
from runtime.journal import Journal, MemoryJournal, Recorded, RunIndexedJournal, ScanningJournal
from runtime.model import ModelClient, ScriptedClient
from runtime.session import Session
from runtime.snapshots import Snapshots
from runtime.stops import (
    CeilingBreached,
    Ceilings,
    Interrupted,
    Parked,
    ReplayDivergence,
    ReplayEnded,
    StepComplete,
    StopRequest,
    Waiting,
)
from runtime.team import COMMON, FlightConfig, Services, Team, split_models, workspace_name

Stop = Callable[[], StopRequest | None]


class FlightError(Exception):
    """A run cannot be started, resumed or replayed; the message says why."""


@dataclass(frozen=True)
class FlightOutcome:
    run_id: str
    status: str
    reason: str = ""
    finished: TeamFinished | None = None
    again_in: float = 0.0  # "waiting": how soon the next step is worth taking (seconds)


def new_run_id() -> str:
    return "r-" + uuid.uuid4().hex[:12]


def team_named(name: str) -> Team:
    """An installed team (`runtime.plugins`), or FlightError naming the known ones."""
    try:
        return plugins.team(name)
    except plugins.PluginError as exc:
        raise FlightError(str(exc)) from None


def plan(team_name: str, scenario_name: str | None, run_id: str, **settings: Any) -> FlightConfig:
    """The full settings of a new run: the scenario's presets, then the caller's overrides.

    No scenario named: the team's default (its first). A setting is either one every run has
    (`FlightConfig`'s) or one of the team's own (its settings model's); a setting another team
    has is refused in that team's words (`Option.refusal`).
    """
    team = team_named(team_name)
    scenario_name = scenario_name or team.default_scenario
    scenario = team.scenarios.get(scenario_name)
    if scenario is None:
        known = ", ".join(sorted(team.scenarios))
        raise FlightError(f"team {team_name!r} has no scenario {scenario_name!r}; known: {known}")
    given = {k: v for k, v in settings.items() if v is not None}
    own = set(team.settings.model_fields) - {"team"}
    fixed = sorted(
        ({"team", "scenario", "workspace", "settings"} | set(team.settings.places)) & set(given)
    )
    if fixed:
        raise FlightError(
            f"{', '.join(fixed)} cannot be set: they come from the team, the scenario and the run"
        )
    for key in given:
        if key not in COMMON and key not in own:
            raise FlightError(f"team {team_name!r} {refusal(key)}")
    if "models" in given:
        given["models"], names = split_models(given["models"])
        if names:
            given["model_names"] = {**given.get("model_names", {}), **names}
    unknown = set(given.get("models", {})) - set(team.agents)
    if unknown:
        raise FlightError(
            f"team {team_name!r} has no agent {', '.join(sorted(unknown))}; "
            f"its agents: {', '.join(team.agents)}"
        )
    merged = dict(scenario.settings)
    for key, value in given.items():
        preset = merged.get(key)
        # A dict setting is overridden field by field (`--order` keeps the scenario's world).
        if isinstance(preset, dict) and isinstance(value, dict):
            value = {**preset, **value}
        merged[key] = value
    try:
        config = FlightConfig.model_validate(
            {
                "scenario": scenario_name,
                "task": merged.pop("task", scenario.task),
                "workspace": workspace_name(run_id),
                **{k: v for k, v in merged.items() if k in COMMON},
                "settings": {"team": team.name, **{k: v for k, v in merged.items() if k in own}},
            },
            context={"run_id": run_id},
        )
    except ValidationError as exc:
        raise FlightError(f"bad settings: {describe_validation(exc)}") from None
    if team.vet is not None:
        try:
            team.vet(scenario, config)
        except ValueError as exc:
            raise FlightError(str(exc)) from None
    return config


def refusal(key: str) -> str:
    """Why a team refuses a setting it lacks, in the words of a team that has it."""
    for other in plugins.teams().values():
        for option in other.options:
            if option.setting == key and option.refusal:
                return option.refusal
    return f"has no setting {key!r}"


def clients_for(
    config: FlightConfig, team: Team, live: bool = True, models: Mapping[str, str] | None = None
) -> dict[str, ModelClient]:
    """Each agent's model client: the scenario's script, or a client of the endpoint or the
    local server `models` (the host's MINUTES_MODEL_* settings) name."""
    if not live:
        # A replay serves every answer from the journal and never asks a live model.
        return {agent: ModelClient() for agent in team.agents}
    scenario = team.scenarios[config.scenario]
    network: dict[tuple[str, str | None], ModelClient] = {}
    clients: dict[str, ModelClient] = {}
    for agent in team.agents:
        backend = config.models.get(agent, config.model)
        if backend == "scripted":
            clients[agent] = ScriptedClient(scenario.scripts.get(agent, []), agent)
            continue
        if backend in ("zi", "rules"):
            from runtime.zero import RuleClient, ZIClient

            clients[agent] = ZIClient(agent) if backend == "zi" else RuleClient()
            continue
        named = config.model_names.get(agent) if backend == "endpoint" else None
        if (backend, named) not in network:
            from runtime.openai_client import OpenAIClient

            client = (
                OpenAIClient.local(models or {})
                if backend == "local"
                else OpenAIClient.from_env(models or {})
            )
            if named:  # the same endpoint, asked for another model by this agent
                client.model = named
            network[(backend, named)] = client
        clients[agent] = network[(backend, named)]
    return clients


def drive(
    session: Session,
    config: FlightConfig,
    root: Path,
    live: bool = True,
    services: Services | None = None,
) -> FlightOutcome:
    """Fly (or go on flying) the run as far as the session lets it.

    Besides a verdict, a flight can end "interrupted" (an operator's stop), "dead-lettered"
    (waiting for a person's decision) or "stepped" (the session's steps were used up: more to
    do, in another session). A hard ceiling ends the run with the harness's verdict "halted".
    """
    team = team_named(config.team)
    session.ceilings = Ceilings(seconds=config.max_seconds, turns=config.max_run_turns)
    services = services or Services()
    if config.sandbox and not services.sandbox.required:
        # Started in the sandbox, the run stays in it: an opt-out covers runs started after it.
        services = replace(services, sandbox=replace(services.sandbox, required=True))
    # A git killed with its worker left its lock files, on which every later git would fail:
    # cleared once a step, before the step's first live work (a replay does none).
    workspace = root / config.workspace
    session.start.before_live(lambda began: git_run.clear_stale_locks(workspace, began))
    try:
        clients = clients_for(config, team, live, services.models)
        if config.max_seconds is not None:
            # Checked at turn boundaries by the session; a client's retries must not carry a
            # turn minutes past it.
            for client in clients.values():
                client.give_up_at(session.started + config.max_seconds)
        finished = team.fly(session, config, clients, root, services)
    except Interrupted as exc:
        return FlightOutcome(session.run_id, "interrupted", str(exc))
    except Parked as exc:
        return FlightOutcome(session.run_id, "dead-lettered", exc.reason)
    except Waiting as exc:
        return FlightOutcome(session.run_id, "waiting", exc.why, again_in=exc.seconds)
    except StepComplete:
        return FlightOutcome(session.run_id, "stepped")
    except CeilingBreached as exc:
        finished = session.new(TeamFinished, status="halted", reason=str(exc))
        session.emit(finished)
    return FlightOutcome(session.run_id, finished.status, finished.reason, finished)


def fly(
    journal: Journal,
    config: FlightConfig,
    run_id: str,
    root: Path,
    stop: Stop | None = None,
    services: Services | None = None,
    faults: Faults | None = None,
    snapshots: Snapshots | None = None,
) -> FlightOutcome:
    session = Session(journal, run_id, stop=stop, faults=faults, snapshots=snapshots)
    if session.recorded:
        raise FlightError(
            f"run {run_id} already has {len(session.recorded)} events; resume it instead"
        )
    root.mkdir(parents=True, exist_ok=True)
    return drive(session, config, root, services=services)


def recorded_config(events: list[Any], run_id: str) -> FlightConfig:
    if not events or not isinstance(events[0], TeamStarted):
        raise FlightError(f"run {run_id}: the journal does not start with TeamStarted")
    try:
        return FlightConfig.model_validate(events[0].config, context={"run_id": run_id})
    except ValidationError as exc:
        raise FlightError(
            f"run {run_id}: unreadable settings in TeamStarted: {describe_validation(exc)}"
        ) from None


def resume(
    journal: Journal,
    run_id: str,
    root: Path,
    stop: Stop | None = None,
    by: str = "operator",
    services: Services | None = None,
    faults: Faults | None = None,
    snapshots: Snapshots | None = None,
) -> FlightOutcome:
    """Continue a crashed or interrupted run from its journal (with `snapshots`, from its
    agent loop's latest snapshot where one fits: runtime/snapshots.py)."""
    session = Session(journal, run_id, stop=stop, resumed_by=by, faults=faults, snapshots=snapshots)
    first = session.ahead(0)
    config = recorded_config([first] if first is not None else [], run_id)
    last = session.ahead(session.record_length - 1)
    if isinstance(last, TeamFinished):
        return FlightOutcome(run_id, last.status, f"already finished: {last.reason}", last)
    refuse_unready(journal, run_id, config, root, services)
    return drive(session, config, root, services=services)


def preflight(config: FlightConfig, services: Services | None = None) -> None:
    """FlightError for what `drive` would refuse before the run's first event (its models'
    settings: an endpoint's URL that is no URL), asked before the command line takes the run's
    lease: a refused flight wrote the lease's grant and release, and nothing else."""
    clients_for(config, team_named(config.team), True, (services or Services()).models)


def unfinished(journal: Journal, run_id: str, root: Path, services: Services | None = None) -> bool:
    """Whether a resume of the run has anything to drive (False: it finished, and its resume
    says so, writing nothing), asked before anything of the resume is written or taken (its
    lease, its stop lifted); FlightError when it could not go on here (`refuse_unready`, of
    the settings its journal starts with)."""
    records = journal.read(streams.journal(run_id))
    config = recorded_config([records[0].event] if records else [], run_id)
    if records and isinstance(records[-1].event, TeamFinished):
        return False
    preflight(config, services)
    refuse_unready(journal, run_id, config, root, services)
    if why := workspace_gone(records, root):
        # Resumed without it (a journal copied or exported elsewhere), every tool call of the
        # run failed on the missing folder, each written down, and the suite's check ended it.
        raise FlightError(
            f"run {run_id} cannot go on here: {why}. Nothing of the resume was written: resume "
            "it where its workspace is (--workspaces names the folder that holds it)"
        )
    return True


def workspace_gone(records: list[Recorded], root: Path) -> str | None:
    """Why the repository the run works in is not under `root`, or None (it is, or the run
    has none). The command line's resume asks, having read the run's record whole."""
    from runtime import workspace  # git and files: only a run with a workspace needs it

    prepared = next((r.event for r in records if isinstance(r.event, WorkspacePrepared)), None)
    if prepared is None:
        return None
    try:
        where = workspace.located(root, prepared.path)
    except ValueError:
        return f"its workspace {prepared.path!r} is no folder under {root}"
    if not (where / ".git").is_dir():
        return f"its workspace {prepared.path} is not in {root}"
    return None


def refuse_unready(
    journal: Journal,
    run_id: str,
    config: FlightConfig,
    root: Path,
    services: Services | None = None,
) -> None:
    """FlightError, in the run's team's words (Team.ready), when what the run works on is not
    in this journal or on this host. A support-desk run exported from a store carries its own
    writes to its order, not the order's opening (no run's): its resume was accepted, each of
    its agents' tool calls then failed on the missing order, a turn after another, all written
    down, and the harness stopped at its own check of the order with a traceback."""
    team = team_named(config.team)
    if team.ready is None:
        return
    why = team.ready(journal, run_id, config, root, services or Services())
    if why:
        raise FlightError(
            f"run {run_id} cannot go on here: {why}. Nothing of the resume was written: resume "
            "it where what it works on is (a run exported from a store, in that store: "
            f"python manage.py resume_run {run_id})"
        )


@dataclass(frozen=True)
class ReplayReport:
    identical: bool
    events: int
    difference: str = ""
    complete: bool = True
    # The run's verdict when a person wrote it from outside the harness (its dead letter
    # discarded: services/letters.py), which no replay writes: its reason, else "".
    ended_by: str = ""
    # The events of the run's parallel specialists (worker-<run>-... streams): the replay reads
    # their reports back from the record, as the run's own journal holds them, and does not
    # run them again, so `events` does not count them.
    read_back: int = 0

    def specialists(self) -> str:
        """What a report says of the specialists' events, which it does not count ("" if none)."""
        if not self.read_back:
            return ""
        return (
            f" (and its specialists' {self.read_back} events, read back from the record, "
            "not run again)"
        )


def run_records(journal: Journal, run_id: str) -> list[Recorded]:
    """A run's records in journal order: its own stream and its parallel specialists'."""
    own = journal.read(streams.journal(run_id))
    workers = cast(ScanningJournal, journal).read_prefix(f"worker-{run_id}-")
    return sorted([*own, *workers], key=lambda r: r.position) if workers else own


def figured_records(journal: Journal, run_id: str) -> list[Recorded]:
    """What a run's figures are folded from (views, findings, metrics, a comparison's sides),
    in journal order: every record whose event names the run, on whichever stream (its lease,
    claims, conflicts, sagas, breakers, control), as the server's projector folds them
    (journal_store/projection.py groups by the event's run). One that names no run (an old
    journal's) is the run's when it is on one of the run's own streams, as an import gives it
    that run (journal_store/transfer.py) and `run_records` read it.

    Not what a replay or a resume reads (`run_records`): they drive the run's own streams.
    A journal that reads a run by its index (the database's read_run) is read so, and the
    run's own streams by their names for the records that name no run: what the run holds,
    where a read of every record cost the store's."""
    own = streams.journal(run_id)
    workers = f"worker-{run_id}-"

    def figured(r: Recorded) -> bool:
        return r.event.run_id == run_id or (
            not r.event.run_id
            and (
                r.stream == own
                or r.stream.startswith(workers)
                or streams.owners(r.stream) == [run_id]
            )
        )

    indexed = unfenced(journal)
    if not isinstance(indexed, RunIndexedJournal):
        return [r for r in journal.read_all() if figured(r)]
    found = {r.position: r for r in indexed.read_run(run_id)}
    found.update((r.position, r) for r in own_streams(indexed, run_id) if figured(r))
    return [found[p] for p in sorted(found)]


def own_streams(journal: Journal, run_id: str) -> list[Recorded]:
    """Every record of the streams named as the run's own (streams.owners), found by their
    names: each of OWN's by its name, the nested ones and the leases on the run's resources
    by their prefixes, and the sagas the run wrote to (a saga's name ends with the run's id,
    which no prefix reads; a run's sagas are written under its id: runtime/fanout/saga.py)."""
    scanning = cast(ScanningJournal, journal)
    names = [prefix + run_id for prefix in streams.OWN]
    prefixes = [f"{p}{run_id}-" for p in streams.NESTED] + ["lease-" + streams.resource(run_id, "")]
    indexed = unfenced(journal)
    if isinstance(indexed, RunIndexedJournal):  # the database's: one statement
        found = indexed.read_streams(names, prefixes)
    else:
        found = [r for name in names for r in journal.read(name)]
        found += [r for prefix in prefixes for r in scanning.read_prefix(prefix)]
    return found + fork.owned(scanning, run_id, "saga-")


def traced_records(journal: Journal, run_id: str) -> list[Recorded]:
    """What a run's trace reads (runtime/otel): its records (`run_records`), and beside them
    its waits for a person on streams of their own, the conflicts it parked and the dead
    letters of its control stream with their decisions, all in journal order. A journal that
    holds none of those gives `run_records` as it is."""
    # Here, not at the top: a worker that imports this module to fly has no trace to build,
    # and runtime.otel brings the OTLP protobuf definitions with it.
    from runtime.otel.waits import waits_on

    control = journal.read(streams.control(run_id))
    # The conflicts the run parked name it (waits_on): those of the streams it wrote to, by
    # the journal's index of runs where it has one, not every conflict ever parked.
    conflicts = fork.owned(cast(ScanningJournal, journal), run_id, "conflict-")
    waits = [r for r in [*control, *conflicts] if waits_on(run_id, r)]
    records = run_records(journal, run_id)
    return sorted([*records, *waits], key=lambda r: r.position) if waits else records


def replay(journal: Journal, run_id: str) -> ReplayReport:
    """Re-run a run with every model answer and tool result served from its journal alone."""
    events = [r.event for r in journal.read(streams.journal(run_id))]
    config = recorded_config(events, run_id)
    session = Session(MemoryJournal(), run_id, recorded=events, replay=True, source=journal)
    read_back = len(cast(ScanningJournal, journal).read_prefix(f"worker-{run_id}-"))
    try:
        drive(session, config, Path("/nonexistent/replay-runs-no-tools"), live=False)
    except ReplayDivergence as exc:
        if ended := ended_by_a_discard(journal, run_id, events, session.cursor):
            return ReplayReport(True, session.cursor, ended_by=ended, read_back=read_back)
        return ReplayReport(False, session.cursor, str(exc), read_back=read_back)
    except ReplayEnded:
        return ReplayReport(True, session.cursor, complete=False, read_back=read_back)
    if session.cursor < len(events):
        extra = events[session.cursor]
        return ReplayReport(
            False,
            session.cursor,
            f"at version {session.cursor + 1}: the replay ended; "
            f"the journal goes on with {extra.kind}",
            read_back=read_back,
        )
    return ReplayReport(True, session.cursor, read_back=read_back)


def ended_by_a_discard(journal: Journal, run_id: str, events: list[Any], cursor: int) -> str:
    """The reason of the run's last event when the replay reached it and it is the verdict a
    person's discard of the run's dead letter wrote (a control-stream letter: a step that kept
    failing), else "". The harness never writes that verdict, so the replay cannot: every
    event before it reproduced, and the run was then ended from outside."""
    last = events[-1] if events else None
    if cursor != len(events) - 1 or not isinstance(last, TeamFinished):
        return ""
    control = journal.read(streams.control(run_id))
    if not any(isinstance(r.event, DeadLetterDiscarded) for r in control):
        return ""
    return last.reason


def find_run(
    journal: Journal, streams: list[str], given: str | None = None, option: str = "--run"
) -> str:
    """The run `given` names, or the journal's only run. A run the journal does not hold is
    refused, naming those it holds: read, it would be a run with no events (views would say
    it is running, a trace would be empty). `option`: how the caller names a run to choose."""
    runs = [s.removeprefix("run-") for s in streams if s.startswith("run-")]
    if given:
        if given not in runs:
            raise FlightError(f"the journal holds no run {given!r} (it holds {some(runs)})")
        return given
    if not runs:
        raise FlightError("the journal holds no run")
    if len(runs) > 1:
        raise FlightError(f"the journal holds several runs ({some(runs)}): name one with {option}")
    return runs[0]


def some(runs: list[str], shown: int = 10) -> str:
    """The runs by name, the first `shown` of a journal of many, and how many more."""
    more = f" and {len(runs) - shown} more" if len(runs) > shown else ""
    return (", ".join(runs[:shown]) or "none") + more
