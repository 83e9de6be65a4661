"""Forking a run at one of its events: a new run whose journal is the parent's up to there.

The fork's journal is exactly what a crash right after that event would have left of the
parent, under the fork's id: resuming it replays the parent's prefix from the record (every
model answer, tool result and side effect is read back, never asked for or done again) and
goes live after it. One difference is deliberate: an outside effect (a refund, an order's
status) that the parent dispatched but whose outcome is not in the prefix stays the parent's.
A crash there would have its run take the effect over under the same key; the fork asks again
under its own id, and the gate judges that as a new call against the world as the parent left
it (a refund already given is refused as too much, a status already moved parks a conflict).
Taking the parent's effect over would let two runs claim one outcome, and nothing is done
twice either way. What a person changes applies from the fork point on:

- `models`: another backend for some agents (the record still serves their past answers);
- `message`: a person's word for one agent, read as new mail at its next turn;
- `tool_result`: the tool result at the fork point replaced (the fork point must be one);
- `max_turns`, `allowance`: the run's turn cap and token allowance, in force from the fork
  point on (runtime/limits.py): an agent's next turn is counted against the new cap, and the
  run's ledgers are resized (journalled) before they are next spent or checked.

A fork serves an intent of its own, `task-<fork>`, as every run does: the parent's carried
task intent is copied under the fork's id, with the versions people declared of it before the
fork point (the intent as it stood there), and none declared after. A person who changes the
parent's mind later does not reach its forks; one who changes a fork's supersedes `task-<fork>`.

Nothing is trusted: the fork is replayed against the harness in memory before anything is
written, and refused, naming the event, when the prefix would not replay under its settings;
its team is asked whether it can go on live from there, on this journal and host (ready()).
No fork starts at or after a dead letter of the run's own journal (unforkable()).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

from pydantic import ValidationError

from runtime import keys, renaming, streams
from runtime.coordination.gates import TASK, Intents
from runtime.events import (
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    Event,
    LeaseGivenBack,
    LeaseGranted,
    LeaseRenewed,
    LeaseTaken,
    MessageInjected,
    RunForked,
    TeamFinished,
    TeamStarted,
    WorkerHandedOff,
    WorkerReported,
    WorkerTimedOut,
    WorkspacePrepared,
    WorktreeAdded,
    WorktreeRemoved,
    new_id,
)
from runtime.events.base import describe_validation
from runtime.events.lineage import ModelSettings
from runtime.fenced import unfenced
from runtime.fork_checks import Changes as Changes
from runtime.fork_checks import ForkRefused as ForkRefused
from runtime.fork_checks import check, cited
from runtime.journal import (
    BatchJournal,
    Journal,
    MemoryJournal,
    OwnedJournal,
    Recorded,
    ScanningJournal,
)
from runtime.team import FlightConfig, Services, split_models, workspace_name

# The streams a fork copies: what the run did. Not its control (people's stop and resume) nor
# its leases (who drove it): those belong to the parent's history alone.
COPIED = ("run-", "worker-", "saga-", "breakers-")
# The leases a harness took on the run's own resources (`lease-<run>:fix:T1`: a parallel
# writer's fix or file) are no fork points either. Their streams are carried, renamed, as they
# stood at the fork point (`carried`): the run's record says which of them its agents hold, at
# which epoch, and the fork goes on holding them (its merges are fenced by them) as the parent
# did, under its own names (runtime/renaming.py). A fork must never renew, release or be
# fenced by its parent's leases.
WRITES = ("edit_file", "write_file")  # the tools that change a workspace's files


class UnreadableSettings(ForkRefused):
    """The run's own settings (its TeamStarted) do not validate here, whatever the fork would
    change: said as its replay and baseline say it (flight.recorded_config), with their status
    where the web answers it (a 409: the run is so, no change asked of the fork mends it)."""


class ForkNotWritten(Exception):
    """The fork was planned, checked and its workspace restored, but the journal did not take
    its events (a full disk, a file past its size limit, another writer on its streams):
    nothing of it was written, and the workspace made for it was removed. Asked again, it may
    go through."""

    def __init__(self, parent: str, where: str, failure: BaseException, removed: bool) -> None:
        why = failure.strerror if isinstance(failure, OSError) and failure.strerror else failure
        left = ", and the workspace made for it was removed" if removed else ""
        super().__init__(
            f"the fork of run {parent} was not written to {where}: {why}. "
            f"Nothing of the fork was written{left}; try again"
        )


@dataclass
class Fork:
    """What to write for the fork: its streams' events in the parent's order, and its lineage."""

    run_id: str
    parent: str
    config: FlightConfig
    events: list[tuple[str, Event]]  # (stream, event), in the order they are to be appended
    forked: RunForked
    parent_workspace: str | None  # the parent's workspace directory, when the team has one
    commit: str | None  # the workspace's commit at the fork point

    def streams(self) -> dict[str, list[Event]]:
        found: dict[str, list[Event]] = {}
        for stream, event in self.events:
            found.setdefault(stream, []).append(event)
        return found


def copied(stream: str, run_id: str) -> bool:
    return streams.owned_by(stream, run_id) and stream.startswith(COPIED)


def plan(
    records: Sequence[Recorded],
    parent: str,
    child: str,
    position: int,
    changes: Changes,
    by: str,
) -> Fork:
    """The fork of run `parent` (its records, every stream it owns, in position order) after
    the event at `position`; ForkRefused says why not."""
    own = [r for r in records if copied(r.stream, parent)]
    main = [r for r in own if r.stream == streams.journal(parent)]
    if not main or not isinstance(main[0].event, TeamStarted):
        raise ForkRefused(f"run {parent} has no TeamStarted: there is nothing to fork")
    where = next((i for i, r in enumerate(own) if r.position == position), None)
    if where is None and own[0].position < position < own[-1].position:
        # Said as a range, "positions 1 to 85" read as holding 48 (a lease's, say).
        other = next((r for r in records if r.position == position), None)
        what = f"a {other.event.kind} of stream {other.stream}" if other else "another stream's"
        raise ForkRefused(
            f"position {position} lies among run {parent}'s events but is {what}, not one "
            "of them: fork at one of the run's events"
        )
    if where is None:
        raise ForkRefused(
            f"position {position} is not an event of run {parent}'s journal "
            f"(its events are at positions {own[0].position} to {own[-1].position})"
        )
    at = own[where]
    if (why := unforkable(at, parent, first_letter(records, parent))) is not None:
        raise ForkRefused(why)
    # The parent's task intent as it stood at the fork point: its versions declared before it.
    intent = Intents.stream(TASK + parent)
    declared = [r for r in records if r.stream == intent and r.position < position]
    prefix = own[: where + 1]
    leases = carried(records, prefix, parent)
    prefix = sorted([*prefix, *declared, *leases], key=lambda r: r.position)
    agents = cast({r.event.agent for r in records if r.event.agent}, main[0].event.team)
    check(changes, at, agents, parent)
    config = configured(main[0].event, child, changes, by)
    forked = RunForked(
        run_id=child,
        parent=parent,
        at=position,
        number=main.index(at) + 1 if at in main else where + 1,
        by=by,
        changes=changes.as_dict(),
        parent_models=parent_models(main[0].event.config),
    )
    # A carried lease's expiry is a time on the parent's clock: a fork made after it passed
    # found the lease free, and its writers took each other's files. It lasts, from the fork,
    # what it had left at the fork point.
    gap = max(0.0, forked.t - at.event.t) if forked.t and at.event.t else 0.0
    events: list[tuple[str, Event]] = []
    commit: str | None = None
    for rec in prefix:
        event = rec.event
        if isinstance(event, LeaseGranted | LeaseRenewed) and rec.stream.startswith("lease-"):
            event = event.model_copy(update={"expires": event.expires + gap})
        if rec is at and changes.replace_result:
            event = event.model_copy(update={"result": changes.tool_result, "error": None})
        if isinstance(event, TeamStarted):
            # Not the parent's start request (`asked`): no keyed start sent again is the fork.
            update = {"config": config.model_dump(mode="json"), "asked": None}
            event = event.model_copy(update=update)
        if isinstance(event, WorkspacePrepared):
            commit = event.commit
            event = event.model_copy(update={"path": config.workspace})
        if looking_worktree(event):  # beside the fork's workspace, named as the workspace is
            event = event.model_copy(update={"path": f"{config.workspace}.{event.writer}"})
        event = renaming.moved(event, parent, child)
        stream = streams.renamed(rec.stream, parent, child)
        # A declared version is a person's word about the intent, no run's event (as
        # Intents.declare writes it): not the fork's to export, list or count as its own.
        owner = child
        if rec.stream == intent:
            stream, owner = Intents.stream(TASK + child), ""
        # A new id: an event is stored once; the copy is the fork's own fact.
        events.append((stream, event.model_copy(update={"run_id": owner, "id": new_id()})))
    # The fork point, in the fork's own journal: where its clock restarts (a reply's deadline
    # does not count the time between the parent's event and the fork) and where a person's
    # message is put.
    events.append((streams.journal(child), forked))
    if changes.message is not None:
        agent, text = changes.message
        note = MessageInjected(run_id=child, agent=agent, by=by, text=text)
        events.append((streams.journal(child), note))
    workspace = main[0].event.config.get("workspace") if commit is not None else None
    return Fork(child, parent, config, events, forked, workspace, commit)


def carried(records: Sequence[Recorded], prefix: Sequence[Recorded], run_id: str) -> list[Recorded]:
    """The leases on the run's own resources as the prefix leaves them: each resource's lease
    stream up to the prefix's last LeaseTaken or LeaseGivenBack of it. A harness writes to the
    lease's stream just before it records the take or the give in the run, so a lease event
    after that record belongs to a take or give the prefix does not hold: not carried (the
    fork does it again, live, in its own lease stream)."""
    last: dict[str, int] = {}
    for rec in prefix:
        if isinstance(rec.event, LeaseTaken | LeaseGivenBack):
            last[rec.event.resource] = rec.position
    own = streams.resource(run_id, "")
    return [
        r
        for r in records
        if r.stream.startswith("lease-" + own)
        and r.position < last.get(r.stream.removeprefix("lease-"), 0)
    ]


def parent_models(config: dict[str, Any]) -> ModelSettings | None:
    """The models the parent's agents asked, from its TeamStarted's settings; None when they
    do not say it in the form settings have now (a journal from before; its fork's copied
    calls are then priced at the fork's models, as they were before this was kept)."""
    try:
        return ModelSettings.model_validate(
            {k: v for k, v in config.items() if k in ModelSettings.model_fields}
        )
    except ValidationError:
        return None


def in_flight(planned: Fork) -> list[str]:
    """The sub-tasks whose specialist was at work at the fork point: handed a brief in the
    copied prefix, with no report (or time-out) after it. Nobody sends them off in the fork
    (the parent's were sent when their briefs were written), so whoever writes the fork sends
    them: each resumes from its copied stream, where they sat until their deadline and were
    then run again from the start."""
    out: dict[str, None] = {}
    own = streams.journal(planned.run_id)
    for stream, event in planned.events:
        if stream != own or not event.task_id:
            continue
        if isinstance(event, WorkerHandedOff):
            out[event.task_id] = None
        elif isinstance(event, WorkerReported | WorkerTimedOut):
            out.pop(event.task_id, None)
    return list(out)


LETTERS = (DeadLettered, DeadLetterRetried, DeadLetterDiscarded)


def may_follow(stream: str, kind: str, position: int, run_id: str, letter: int | None) -> bool:
    """Whether a fork may start after an event of this kind, at this position on this stream
    of run `run_id`, whose first dead letter is at position `letter` (None: it has none);
    unforkable() says why not."""
    before = letter is None or position < letter
    return copied(stream, run_id) and kind != TeamFinished.kind and before


def first_letter(records: Iterable[Recorded], run_id: str) -> Recorded | None:
    """The first dead letter of run `run_id`'s own journal (a harness parked its work), or a
    decision on one: no fork starts at it or after it (unforkable)."""
    own = streams.journal(run_id)
    return next((r for r in records if r.stream == own and isinstance(r.event, LETTERS)), None)


def unforkable(at: Recorded, run_id: str, letter: Recorded | None) -> str | None:
    """Why no fork can start after this event of run `run_id` (whose first dead letter is
    `letter`: first_letter), whatever is changed; None when the event alone does not rule one
    out. The run's page asks it of each event (a timeline row offers no fork where none can be
    made), as plan() does."""
    if not copied(at.stream, run_id):
        # Of the run, on a stream of its own, and still not what it did: a person's tag, stop
        # or resume, or who drove it. Refused as "not an event of the run's journal", between
        # positions of that journal, the sentence contradicted itself.
        return (
            f"the event at position {at.position} ({at.event.kind}, in {at.stream}) is not "
            "part of what the run did: a fork copies the run's journal and its specialists' "
            "and sagas' streams, not people's tags, stops and resumes nor the leases of who "
            "drove it; fork at an event of the run's journal"
        )
    if isinstance(at.event, TeamFinished):
        return f"{cited(at, run_id)} is the run's verdict: fork at an earlier event"
    if letter is not None and at.position >= letter.position:
        # A harness letter's id names its run (`<run>:1`): the fork's replay makes
        # `<fork>:1` where the record says `<parent>:1`, and parted there, refused as if the
        # fork's settings were at fault. Renaming it would copy an open letter, or a person's
        # decision on the parent's work, into the fork: neither is the fork's.
        assert isinstance(letter.event, LETTERS)
        named = f"the run's dead letter {letter.event.letter_id}"
        if at.position == letter.position:
            where = f"is {named} ({letter.event.kind})"
        else:
            where = f"comes after {named} ({cited(letter, run_id)}, a {letter.event.kind})"
        return (
            f"{cited(at, run_id)} {where}: a dead letter and a person's decision on it belong "
            "to the run they parked, and a fork carries neither; fork at an event before the "
            "letter (the fork parks its work in a letter of its own, if it comes to that)"
        )
    return None


def cast(agents: Iterable[str], team: str) -> set[str]:
    """Of the names a run's events give as their agent, those its team flies (Team.agents):
    a message and a backend are for them. Not the operator who hands repo-fix's orchestrator
    its task, nor a harness (triage-lead): a message for one was written and read by nobody."""
    from runtime import plugins  # the installed teams import this package's modules

    found = plugins.teams().get(team)
    return {a for a in agents if found is None or a in found.agents}


def configured(started: Event, child: str, changes: Changes, by: str) -> FlightConfig:
    assert isinstance(started, TeamStarted)
    settings = dict(started.config)
    settings["workspace"] = workspace_name(child)
    settings["started_by"] = by  # who forked it steers it
    if changes.models:
        backends, names = split_models(changes.models)
        settings["models"] = {**settings.get("models", {}), **backends}
        # An agent handed to another backend, or to the endpoint's own model, drops its old name.
        kept = {a: n for a, n in settings.get("model_names", {}).items() if a not in backends}
        settings["model_names"] = {**kept, **names}
    # The caps are checked as settings would be, but the fork keeps its parent's in its own:
    # its prefix replays under them, and RunForked carries the new ones from its point on.
    caps = {"max_turns": changes.max_turns, "allowance": changes.allowance}
    from runtime import flight  # (flight imports team, which imports this module)

    try:  # the parent's as recorded first: pydantic's own dump of them was the answer
        flight.recorded_config([started], started.run_id)
    except flight.FlightError as exc:
        raise UnreadableSettings(str(exc)) from None
    try:
        FlightConfig.model_validate(
            {**settings, **{k: v for k, v in caps.items() if v is not None}},
            context={"run_id": child},
        )
        config = FlightConfig.model_validate(settings, context={"run_id": child})
    except ValidationError as exc:
        raise ForkRefused(
            f"the fork's settings are not valid: {describe_validation(exc)}"
        ) from None
    from runtime import plugins  # the installed teams import this package's modules

    team = plugins.teams().get(config.team)
    if team is not None and team.pin is not None:
        config = config.model_copy(update={"settings": team.pin(config.settings, started.run_id)})
    return config


class Overlay:
    """A journal that reads the fork's streams from memory and every other from `base`: the
    fork replays against the shared world as it is, before a line of it is written."""

    def __init__(self, base: Journal, fork: Fork) -> None:
        self.base = base
        self.mine = MemoryJournal()
        for stream, events in fork.streams().items():
            self.mine.append(stream, events, 0)
        self.names = set(fork.streams())

    def read(self, stream: str, after: int = 0) -> list[Recorded]:
        if stream in self.names:
            return self.mine.read(stream, after)
        return self.base.read(stream, after)

    def read_prefix(self, prefix: str) -> list[Recorded]:
        own = self.mine.read_prefix(prefix)
        theirs = [r for r in self.base_prefix(prefix) if r.stream not in self.names]
        return sorted([*own, *theirs], key=lambda r: (r.stream not in self.names, r.position))

    def base_prefix(self, prefix: str) -> list[Recorded]:
        return self.base.read_prefix(prefix) if isinstance(self.base, ScanningJournal) else []

    def read_all(self, after: int = 0, limit: int | None = None) -> list[Recorded]:
        return self.base.read_all(after, limit)

    def version(self, stream: str) -> int:
        return self.mine.version(stream) if stream in self.names else self.base.version(stream)

    def append(self, stream: str, events: Sequence[Event], expected: int, **kw: Any) -> Any:
        raise ForkRefused("a fork is checked by replaying it: nothing may be written")


def verify(base: Journal, fork: Fork) -> None:
    """Replay the fork in memory; ForkRefused naming the first event that would not replay."""
    from runtime import flight  # flight imports the teams, which may import this module

    report = flight.replay(Overlay(base, fork), fork.run_id)  # type: ignore[arg-type]
    if not report.identical:
        raise ForkRefused(
            "the run would not replay to the fork point under the fork's settings "
            f"({report.difference}); fork at an earlier event, or change less"
        )


def ready(base: Journal, fork: Fork, root: Path, services: Services) -> None:
    """ForkRefused, in its team's words, when the fork could not go on live after its fork
    point on this journal and host, whatever is asked of it (Team.ready: what the run works
    on is not here); asked through the fork's own streams in memory, before anything is
    written. verify() replays the prefix only, which never reads that world."""
    from runtime import plugins  # the installed teams import this package's modules

    team = plugins.teams().get(fork.config.team)
    if team is None or team.ready is None:
        return
    overlay = Overlay(base, fork)  # its append refuses: asking is no writing
    why = team.ready(overlay, fork.run_id, fork.config, root, services)  # type: ignore[arg-type]
    if why:
        raise ForkRefused(f"the fork could not go on live: {why}. Nothing of it was written")


def write(journal: BatchJournal, fork: Fork) -> None:
    """Append the fork's events in the parent's order (each stream from version 0), its
    RunForked and a person's message last: in one append_batches, so that a fork is written
    whole or not at all (a failed write leaves no run with half a past)."""
    batches: list[tuple[str, list[Event], int]] = []
    versions: dict[str, int] = {}
    for stream, event in fork.events:
        if batches and batches[-1][0] == stream:
            batches[-1][1].append(event)
        else:
            batches.append((stream, [event], versions.get(stream, 0)))
        versions[stream] = versions.get(stream, 0) + 1
    journal.append_batches(batches)


def records_of(journal: ScanningJournal, run_id: str) -> list[Recorded]:
    """Every stream a fork may copy or carry of run `run_id`, in position order, and the
    versions people declared of its task intent. Read by names that hold the run's id, and of
    them the streams the run wrote to (`owned`): a read of every `worker-` or `saga-` stream
    filtered afterwards cost what every run in the store had written there, at every fork."""
    found: list[Recorded] = list(journal.read(Intents.stream(TASK + run_id)))
    found += journal.read(streams.journal(run_id))
    found += journal.read(streams.breakers(run_id))
    for prefix in (f"worker-{run_id}-", "saga-"):  # COPIED's nested and saga streams
        found += [r for r in owned(journal, run_id, prefix) if streams.owned_by(r.stream, run_id)]
    found += owned(journal, run_id, "lease-" + streams.resource(run_id, ""))  # plan() carries them
    return sorted(found, key=lambda r: r.position)


def owned(journal: ScanningJournal, run_id: str, prefix: str) -> list[Recorded]:
    """The events of the streams named `prefix`... that run `run_id` wrote to (an event with
    its id on the envelope), in position order: by the journal's own read where it has one
    (the store seeks its index of runs; the file journal keeps the streams each run wrote),
    else picked out of a read of every stream so named. Whoever writes a run's own streams
    stamps its id (a session, its leases, a fork's copy; an import is held to it), so a
    stream the run never wrote to is another's: `worker-r-a-b-S1-w` of a run `r-a-b`, whose
    name run `r-a` could own too."""
    indexed = unfenced(journal)
    if isinstance(indexed, OwnedJournal):
        return indexed.read_owned(run_id, prefix)
    found = journal.read_prefix(prefix)
    written = {r.stream for r in found if r.event.run_id == run_id}
    return [r for r in found if r.stream in written]


def own_forked(records: Sequence[Recorded], run_id: str) -> RunForked | None:
    """The RunForked that made run `run_id` a fork, from its journal's records: the last one
    (a fork of a fork also holds its parent's, copied before it); None for a run no fork
    made."""
    found = [
        r.event for r in records if isinstance(r.event, RunForked) and r.event.run_id == run_id
    ]
    return found[-1] if found else None


def keyed_id(key: str, by: str, parent: str, secret: bytes = b"") -> str:
    """The id of the fork of run `parent` that `by` asks for with idempotency key `key`
    (runtime/keys.py; the server's under its `secret`): the same key on a fork of another run
    names another fork."""
    return keys.run_id(key, by, f"fork of {parent}", secret)


def differences(forked: RunForked, parent: str, at: int, changes: Changes) -> list[str]:
    """Where a fork asked again (of `parent` after `at`, with `changes`) asks for another fork
    than the one made (its RunForked): `parent`, `at`, and the changes by their names
    (models, message, tool_result, max_turns, allowance); [] when it asks for the same."""
    if forked.parent != parent:
        return ["parent"]
    had = {"at": forked.at, **forked.changes}
    # As the event holds them: JSON (a tuple a list, a key a string).
    asked = json.loads(json.dumps({"at": at, **changes.as_dict()}, default=str))
    return [
        k
        for k in sorted(had.keys() | asked.keys())
        if k not in had or k not in asked or had[k] != asked[k]
    ]


def looking_worktree(event: Event) -> TypeGuard[WorktreeAdded | WorktreeRemoved]:
    """Whether `event` gave out or took away the worktree of an agent that commits nothing
    (the repo-fix tester's, at the commit it verifies, on no branch)."""
    return (isinstance(event, WorktreeAdded) and not event.branch) or isinstance(
        event, WorktreeRemoved
    )
