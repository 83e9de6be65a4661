"""One mutation gate: every effect and every integration passes its five checks in one place.

Seed 02 §60's `CoordinationGate`, over the journal. A mutation (a refund, a status change, a
merge into main) carries what it was decided under, and the gate compares each with the record:

    intent       the intent's version it serves is the current one (a person may have changed
                 their mind since)
    lease        the epoch of the lease it holds still stands (fencing: an owner that lost its
                 lease is refused even when alive and sure of itself)
    authority    its actor may use this capability (given by the harness, not claimed)
    evidence     it cites evidence, and the harness found each item in the record
    idempotency  its key is the one derived from the decision, and was never used for another
                 request (one key, one request)

The first check that fails refuses the mutation with `GateRefused`, carrying the typed
`MutationRefused` event naming the check, what was held and what the record says. `check`
journals the event in a log stream (for tools, which run live only); `judge` returns it for a
harness to emit through its session (replayed like any other decision). Either way, nothing the
mutation would write is written: the gate runs before it.

Running before the write is not enough for the intent: a person may supersede it after the check
and before the write, which would then go in under the version they replaced. The lease needs
nothing more, for the fenced append repeats its check; the intent's check is repeated the same
way: `check` returns guards, the intent's stream at the version it was read at before the
checks, and the mutation's write carries them (`Journal.append(..., guards=)`). A write whose
intent moved in between fails with WrongExpectedVersion on the intent's stream, and its maker
checks again (`again`): refused now, as it would have been a moment later.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from runtime import errors
from runtime.coordination.calls import written_since
from runtime.coordination.gates import Intents
from runtime.events import EffectStarted, MutationRefused
from runtime.events.mutation import GateCheck
from runtime.journal import (
    Guard,
    Journal,
    Recorded,
    WrongExpectedVersion,
    append_next,
    last_record,
    read_between,
    standing_epoch,
)
from runtime.session import Session

CHECKS: tuple[GateCheck, ...] = ("intent", "lease", "authority", "evidence", "idempotency")
RACES = 20  # refusals of other calls landing in the log while one call's is written


@errors.replayable
class GateRefused(Exception):
    """A mutation the gate refused; `refused` names the check that failed and why."""

    def __init__(self, refused: MutationRefused) -> None:
        super().__init__(f"refused at the mutation gate ({refused.check}): {refused.reason}")
        self.refused = refused


@dataclass(frozen=True)
class Evidence:
    """One item a mutation cites, as the harness found it in the record (not as claimed)."""

    ref: str
    holds: bool
    why: str = ""  # when it does not hold: what the record shows instead


@dataclass(frozen=True)
class Mutation:
    """A change as it asks to be made: what, by whom, under which intent, lease and evidence."""

    what: str
    actor: str
    capability: str
    intent: tuple[str, int] | None  # (intent id, the version the work was decided under)
    key: str = ""  # the idempotency key, derived from the decision (the ledger fills it in)
    request: str = ""  # what the key is for (a request hash): the key for another is refused
    lease: tuple[str, int] | None = None  # (lease stream, the epoch held); None: no lease fences it
    evidence: tuple[Evidence, ...] = ()
    expected_key: str | None = None  # the key the harness derives for this decision, if it can
    run_id: str = ""
    # Why a person's decision names no intent: what it decides on was recorded under none (a
    # conflict parked before conflicts named their intent), or it commits nothing (a ruling
    # that rejects every claim). Only then does `intent=None` pass.
    no_intent_because: str = ""
    # The tool call that asks for it (runtime/tools.py `Call.ref`), when the tool knows it: its
    # refusal is then journalled once, and the call run again is answered it (`check`).
    call: str | None = None


@dataclass(frozen=True)
class Authority:
    """Who may use which capability, by exact name (a role's name does not stand for its
    members: `coder` is not `coder-b`). A capability nobody is listed for is nobody's."""

    grants: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def allows(self, actor: str, capability: str) -> bool:
        return actor in self.grants.get(capability, frozenset())

    @classmethod
    def of(cls, grants: Mapping[str, set[str] | frozenset[str] | tuple[str, ...]]) -> Authority:
        return cls({k: frozenset(v) for k, v in grants.items()})


class MutationGate:
    """The five checks over one journal. `used(key)` says what request a key was already used
    for (None: never); by default the effect ledger's record (`effect-<key>`)."""

    def __init__(
        self,
        journal: Journal,
        authority: Authority,
        log: str,
        used: Callable[[str], str | None] | None = None,
    ) -> None:
        self.journal = journal
        self.authority = authority
        self.log = log
        self.used = used or self.ledger_use

    def ledger_use(self, key: str) -> str | None:
        # The first record alone: the EffectStarted, which names the request.
        recorded = read_between(self.journal, f"effect-{key}", 0, 1)
        if recorded and isinstance(recorded[0].event, EffectStarted):
            return recorded[0].event.request_hash
        return None

    def judge(self, m: Mutation) -> MutationRefused | None:
        """The refusal of the first check that fails, or None: the mutation may go ahead."""
        for check in CHECKS:
            found = getattr(self, f"_{check}")(m)
            if found is not None:
                held, current, reason = found
                return MutationRefused(
                    run_id=m.run_id,
                    what=m.what,
                    actor=m.actor,
                    capability=m.capability,
                    check=check,
                    key=m.key,
                    held=held,
                    current=current,
                    reason=reason,
                    call=m.call,
                )
        return None

    def check(self, m: Mutation) -> tuple[Guard, ...]:
        """Let the mutation through, or journal the refusal in the log stream and raise it.
        Returns the guards its write must carry: the intent's stream at the version it stood
        at before the checks (see the module docstring)."""
        guards = self.guards(m)
        if m.call is not None:
            self.once(m)
            return guards
        refused = self.judge(m)
        if refused is not None:
            append_next(self.journal, self.log, [refused])
            raise GateRefused(refused)
        return guards

    def once(self, m: Mutation) -> None:
        """The checks of a mutation a tool call asks for (`m.call`): a refusal that call was
        given already is raised again as it was, in its words, with nothing journalled and
        nothing judged (a resumed step runs a call again when its worker died after the
        refusal and before the call's result was written). Judged again, the record might
        have moved since to let it through: a change its first run was refused. Else judged,
        and a refusal appended at the log's version read, so that one of the same call landing
        in between is found instead."""
        for attempt in range(RACES):
            # The log's version first: a refusal of the same call landing after it moves it.
            at = self.journal.version(self.log)
            given = self.given(m.call, self.since(m.call))
            if given is not None:
                raise GateRefused(given)
            refused = self.judge(m)
            if refused is None:
                return
            try:
                self.journal.append(self.log, [refused], at)
            except WrongExpectedVersion:
                if attempt == RACES - 1:
                    raise
                continue
            raise GateRefused(refused)

    def passed(self, m: Mutation) -> tuple[Guard, ...]:
        """The guards of a mutation whose tool call passed the gate in its first run (its tool
        knows it from what it wrote after the gate: the desk's claim), run again by a resumed
        step: not judged again. Past the gate, an uninterrupted call is refused only where its
        write's guards are (`again`), and its write may look at something else first (the
        order's version, which answers OrderMoved); judged again, a call whose first run lost
        its compare-and-swap was refused here where the intent had moved since, a refusal no
        uninterrupted run journals. A refusal the call was given since (its write refused by
        its guards) is raised again; else the guards returned are its first run's: the intent's
        stream at the version that declared the version the mutation holds (the intent check
        passed, so it was the latest), 0 where the stream holds none of it (a run's carried
        intent), so that any version declared since refuses its write as it would have the
        first run's."""
        if m.call is None:
            raise ValueError(f"{m.what}: only a tool call is known to have passed the gate")
        self.refused_before(m)
        if m.intent is None:
            return ()
        intent_id, held = m.intent
        # The record that declared it alone, not the intent's stream (Intents.declared_at).
        return ((Intents.stream(intent_id), Intents(self.journal).declared_at(intent_id, held)),)

    def refused_before(self, m: Mutation) -> None:
        """Raise again the refusal the tool call `m.call` was given already, if any, as `check`
        would: for a tool that checks something of its own before the gate (the desk's refund,
        its amount), which, run again, would otherwise answer in its own words a call whose
        first run was refused here."""
        if m.call is not None:
            given = self.given(m.call, self.since(m.call))
            if given is not None:
                raise GateRefused(given)

    def since(self, call: str | None) -> list[Recorded]:
        """The log's refusals that may be the call's: those journalled after it was dispatched
        (runtime/coordination/calls.py), not the log's whole history of the run's calls."""
        if call is None:
            return self.journal.read(self.log)
        return written_since(self.journal, self.log, MutationRefused.kind, call)

    @staticmethod
    def given(call: str | None, records: list[Recorded]) -> MutationRefused | None:
        """The refusal journalled for the tool call `call` among the log's records, if any."""
        for rec in records:
            if isinstance(rec.event, MutationRefused) and rec.event.call == call:
                return rec.event
        return None

    def guards(self, m: Mutation) -> tuple[Guard, ...]:
        """The intent's stream and its version, read before the checks read the intent: a
        person who supersedes it after this read is seen by the intent check, or makes the
        guarded write fail. A team run's own intent whose versions are all carried by its run
        stands at version 0 of its stream, and any declaration moves it."""
        if m.intent is None:
            return ()
        stream = Intents.stream(m.intent[0])
        return ((stream, self.journal.version(stream)),)

    def again(
        self, m: Mutation, moved: WrongExpectedVersion, guards: tuple[Guard, ...]
    ) -> NoReturn:
        """A write refused by its guards (a guarded stream moved since `check`): check the
        mutation again, which refuses it now (journalled, GateRefused) where the intent was
        superseded. A refusal that was not a guard's, or a check that passes (the stream moved
        and the intent did not), is raised as it came."""
        if moved.stream in {stream for stream, _ in guards}:
            self.check(m)
        raise moved

    # --- the five checks: None when it passes, else (held, current, reason) -------------------

    def _intent(self, m: Mutation) -> tuple[Any, Any, str] | None:
        if m.intent is None:
            if m.no_intent_because:
                return None
            return None, None, f"{m.what} names no intent: no work is done for nobody's intent"
        intent_id, held = m.intent
        # The latest version alone (its stream's last record: Intents.latest_at), not every
        # version a person ever declared, which this check read for every mutation.
        latest = Intents(self.journal).latest(intent_id)
        if latest is None:
            return held, None, f"{m.what} serves intent {intent_id}, which was never declared"
        current = latest.intent_version
        if held != current:
            # Who changed it and why: the intent's stream is no run's, so the run's audit and
            # findings learn of the person's decision from this refusal alone.
            why = f" ({latest.reason})" if latest.reason else ""
            return (
                held,
                current,
                f"{m.what} was decided under version {held} of intent {intent_id}, "
                f"which {latest.by} has since superseded with version {current}{why}",
            )
        return None

    def _lease(self, m: Mutation) -> tuple[Any, Any, str] | None:
        if m.lease is None:
            return None
        stream, held = m.lease
        current = standing_epoch(last_record(self.journal, stream))
        if held != current:
            return (
                held,
                current,
                f"{m.what} carries epoch {held} of {stream}, which stands at epoch {current} now",
            )
        return None

    def _authority(self, m: Mutation) -> tuple[Any, Any, str] | None:
        if self.authority.allows(m.actor, m.capability):
            return None
        granted = sorted(self.authority.grants.get(m.capability, frozenset()))
        return (
            m.actor,
            granted,
            f"{m.actor} may not {m.capability}: "
            + (f"only {', '.join(granted)} may" if granted else "nobody is granted it"),
        )

    def _evidence(self, m: Mutation) -> tuple[Any, Any, str] | None:
        if not m.evidence:
            return [], None, f"{m.what} cites no evidence"
        missing = [e for e in m.evidence if not e.holds]
        if missing:
            return (
                [e.ref for e in m.evidence],
                [e.ref for e in missing],
                "; ".join(e.why or f"{e.ref} is not in the record" for e in missing),
            )
        return None

    def _idempotency(self, m: Mutation) -> tuple[Any, Any, str] | None:
        if not m.key:
            return m.key, m.expected_key, f"{m.what} carries no idempotency key"
        if m.expected_key is not None and m.key != m.expected_key:
            return (
                m.key,
                m.expected_key,
                f"{m.what} carries key {m.key}, not the one its decision derives "
                f"({m.expected_key}): keys are derived, never made up",
            )
        used = self.used(m.key)
        if used is not None and used != m.request:
            return (
                m.request,
                used,
                f"key {m.key} was used for a different request: one key, one request",
            )
        return None


def decide(
    session: Session, gate: Callable[[], MutationGate], m: Mutation, **envelope: Any
) -> MutationRefused | None:
    """The gate's decision on a harness's mutation, journalled in the run: live, the gate
    judges and a refusal is emitted; resumed or replayed, the recorded refusal is read back (and
    none is made up where the record holds none, as in a journal from before the gate)."""
    if not session.live or session.replay:
        recorded = session.peek()
        if isinstance(recorded, MutationRefused):
            session.emit(recorded)
            return recorded
        return None
    refused = gate().judge(m)
    if refused is not None:
        refused = refused.model_copy(update=envelope)
        session.emit(refused)
    return refused
