"""Side effects exactly once: an effect ledger on the journal.

Every side-effecting tool goes through `Ledger.perform`. Its key is derived from the intent —
run, step, target and payload — never made up by a model, so a retry of the same decision has
the same key. The stream `effect-<key>` decides who performs it: the first EffectStarted at
version 0 wins; everybody else reads what happened instead of doing it again:

    finished       the recorded result (or the recorded failure, which is not retried under the
                   same key: deciding to try again is the agent's call, and a new decision is a
                   new key; but see "Sending again after a failure")
    in flight      EffectInProgress
    other payload  EffectKeyReused: one key, one request

The key also goes downstream, so a provider that deduplicates on it (as payment APIs do)
covers the window where we crash after it accepted the request and before we wrote that down.
The reconciler (runtime/coordination/reconciler.py) settles such effects later by asking the
provider what became of the key. A provider that does not know the key may simply not have
answered yet: it records such an effect as failed only once the lease its performer started
it under (EffectStarted's fence) no longer stands, and only after a wait longer than any
provider takes. Should it still lose that race, the performer answers by the record, not by its
call (`settled_first`).

Sending again (`perform(..., resend=True)`). A performer that dies after the provider made an
effect and before its outcome was written leaves the key started and unsettled; answered
EffectInProgress, a resumed saga would turn back with the step undone by nobody (its label
stays at the provider, the journal says nothing was done), and a resumed tool would report a
failure for a refund that was made. Where the provider deduplicates on the key (declared by
whoever performs the effect: the orders server's labels and credits, the desk's payments) the
key may be sent again: the provider does nothing new and answers its first answer, which is
recorded as the outcome, as the uninterrupted performer would have recorded it. Only when its
performer is gone: the lease the effect was last taken under (EffectStarted's fence, or the
last EffectResumed's) no longer stands. Before it sends, the new performer takes the effect
over in the journal: an EffectResumed with its own fence, appended at the version it read
(fenced by its lease, guarded like a start). Two resumers, or a resumer and the reconciler,
cannot both act on what they read: one append wins, the others read again (a standing lease
now: EffectInProgress; or the outcome). The reconciler sees the new fence stand and leaves the
effect to its performer, as it leaves any effect whose performer may still be waiting. The
outcome goes at the next version. Not sent again, as before: an effect whose lease stands (its
performer may be waiting on the provider), one started unfenced (nothing says its performer is
gone; the reconciler settles it by age), and any effect not declared `resend` (a provider that
does not deduplicate would do it twice).

Sending again after a failure (`perform(..., resend=True, again=...)`). A call that never got
the provider's answer (it was down or unreachable, or did not answer in time) is recorded as
failed like any other, but the provider may not have seen it, or may have done it and answers
its first answer to the key: where it deduplicates, sending the same key again is safe, and is
the only way to learn which. The caller says which recorded failures are of that sort
(`again(error)`, never the provider's own refusal, which is its answer to the key); such an
effect is taken over as an orphan is (an EffectResumed after the EffectFailed, at the version
read, fenced) and sent again, its new outcome recorded after. So a compensation that could not
reach its provider (a saga's undo of a credit) is tried again when its run is, rather than
answered its old failure for ever. Never an effect holding part of a total (its hold was given
back when it failed), nor without a fence of the caller's (nothing to stop two senders).

Effects that share a limited total (the refunds of one order, which may not come to more than
it was paid) hold their amount before they start, in the same write as their EffectStarted
(`reserve`): runtime/coordination/holds.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from runtime import errors
from runtime.coordination.effect_records import Seen, Taking, outcome_of, seen
from runtime.coordination.keys import request_hash
from runtime.events import (
    EffectFailed,
    EffectResumed,
    EffectStarted,
    EffectSucceeded,
    ErrorInfo,
    Event,
)
from runtime.fenced import Fenced
from runtime.journal import (
    Batch,
    BatchJournal,
    Fence,
    Guard,
    Journal,
    WrongExpectedVersion,
    last_record,
    read_between,
    standing_epoch,
)

if TYPE_CHECKING:  # the gate reads effect records; the ledger only calls it
    from runtime.coordination.mutation import Mutation, MutationGate


class EffectError(Exception):
    """Base of the ledger's typed refusals."""


class EffectInProgress(EffectError):
    def __init__(self, key: str, started: float) -> None:
        super().__init__(
            f"effect {key} is already in progress (started {time.time() - started:.1f} s ago)"
        )
        self.key = key


class EffectKeyReused(EffectError):
    def __init__(self, key: str) -> None:
        super().__init__(f"effect key {key} was used for a different request: one key, one request")
        self.key = key


class EffectDisputed(EffectError):
    """The performer's call came back with a result after the effect reconciler had recorded
    the effect as failed (the provider did not know the key yet when asked): the provider made
    it and the ledger says it failed. Nobody should make it again under another key."""

    def __init__(self, key: str, error: ErrorInfo, result: Any) -> None:
        super().__init__(
            f"effect {key} was made (the provider answered {result!r}) after the effect "
            f"reconciler had recorded it as failed ({error}): the ledger and the provider "
            "disagree; do not make it again, a person must settle it"
        )
        self.key = key
        self.error = error
        self.result = result


class EffectPreviouslyFailed(EffectError):
    """The effect was tried under this key and failed; it is not retried automatically."""

    def __init__(self, key: str, error: ErrorInfo) -> None:
        super().__init__(
            f"effect {key} already failed ({error}); "
            "deciding to try again is a new decision, with a new key"
        )
        self.key = key
        self.error = error


RACES = 20  # holds on a total lost to other writers before an effect gives up


class Ledger:
    """`journal` decides who performs an effect (on the workers it is fenced by the driver's
    lease: a driver that lost its run cannot start effects). `outcomes` records what became of
    one, and is not fenced: what the provider did is a fact whoever drives the run now.

    With a `gate` (runtime/coordination/mutation.py), every effect is a mutation that passes its
    five checks before anything is read or written for it; one without a mutation is refused."""

    def __init__(
        self, journal: Journal, outcomes: Journal | None = None, gate: MutationGate | None = None
    ) -> None:
        self.journal = journal
        self.outcomes = outcomes or journal
        self.gate = gate

    @staticmethod
    def stream(key: str) -> str:
        return f"effect-{key}"

    def perform(
        self,
        key: str,
        effect_type: str,
        target: str,
        payload: Any,
        call: Callable[[str], Any],
        *,
        run_id: str = "",
        intent: tuple[str, int] | None = None,
        mutation: Mutation | None = None,
        reserve: Callable[[], Batch] | None = None,
        resend: bool = False,
        again: Callable[[ErrorInfo], bool] | None = None,
    ) -> Any:
        """Do the effect once for this key: `call(key)` runs only for the first caller.

        `reserve`, for an effect that takes part of a limited total (a refund, of what the
        order was paid): called before the effect starts, it reads what is held already and
        returns the hold to append (holds.hold), or raises to refuse the effect. The hold and the
        EffectStarted are one write, so no crash leaves one without the other; a writer that
        lost the race for the holds calls it again, to check again.

        `resend`: the provider deduplicates on the key (one effect per key, the first answer
        to every call), so an effect found started and unsettled whose performer's lease no
        longer stands is taken over and sent again (see the module docstring); and, with
        `again`, one recorded as failed with an error `again` says never got the provider's
        answer (not with `reserve`)."""
        digest = request_hash(effect_type, target, payload)
        gated: Mutation | None = None
        guards: tuple[Guard, ...] = ()
        if self.gate is not None:
            if mutation is None:
                raise ValueError(f"effect {key} ({effect_type}) is gated and carries no mutation")
            gated = replace(mutation, key=key, request=digest)
            if self.started_by(key, gated.call):
                # The call that started it, run again (its worker died before the outcome was
                # written): it passed the gate then, and its effect is taken over below, not
                # judged again as a second mutation (refused, where the intent moved since,
                # with the refund perhaps made at the provider). A refusal the call was given
                # since is its answer, as at the gate. Its takeover carries no guard of the
                # intent: the effect was decided at its start, as an uninterrupted call's is.
                self.gate.refused_before(gated)
            else:
                guards = self.gate.check(gated)
            intent = mutation.intent
        stream = self.stream(key)
        # The fence the start is written under: the reconciler reads whether it still stands.
        fence = self.journal.fence if isinstance(self.journal, Fenced) else None
        fence = fence or (mutation.lease if mutation is not None else None)
        started = EffectStarted(
            run_id=run_id,
            key=key,
            effect_type=effect_type,
            target=target,
            request_hash=digest,
            intent_id=intent[0] if intent else None,
            intent_version=intent[1] if intent else None,
            lease=fence[0] if fence else None,
            epoch=fence[1] if fence else None,
            call=mutation.call if mutation is not None else None,
        )
        at = 1  # the version its outcome goes at: after the start and any takings over
        for attempt in range(RACES):
            found = seen(self.journal, stream)
            try:
                if found is not None:
                    retry = again if resend and reserve is None else None
                    if not (resend and self.orphaned(digest, found, fence)) and not self.unreached(
                        digest, found, fence, retry
                    ):
                        return self.answer(key, digest, found)
                    assert fence is not None  # (orphaned and unreached say so)
                    self.take_over(key, found, fence, guards, run_id)
                    at = found.version + 1
                    break
                # Started only while the intent stands where the gate read it (its guard).
                self.start(started, guards, reserve)
                break
            except WrongExpectedVersion as exc:
                if self.gate is not None and gated is not None and exc.stream in dict(guards):
                    self.gate.again(gated, exc, guards)  # the intent moved: refused now
                if exc.stream != stream and attempt == RACES - 1:
                    raise
                # Somebody started it (or took it over) a moment before us (theirs is the
                # effect, read above next time round), or took a hold on the same total (read
                # and checked again).
        try:
            result = call(key)
        except Exception as exc:  # the provider's failure is recorded, then reported
            failed = EffectFailed(run_id=run_id, key=key, error=errors.describe(exc))
            if not self.settle(key, failed, at):
                return self.settled_first(key, exc, None)
            raise
        if not self.settle(key, EffectSucceeded(run_id=run_id, key=key, result=result), at):
            return self.settled_first(key, None, result)
        return result

    def started_by(self, key: str, call: str | None) -> bool:
        """Whether the tool call `call` started the key's effect (EffectStarted v3 names it):
        its first record alone is read. A start written before v3 names no call: no call is
        known to have started it."""
        if call is None:
            return False
        first = read_between(self.journal, self.stream(key), 0, 1)
        started = first[0].event if first else None
        return isinstance(started, EffectStarted) and started.call == call

    def settled_first(self, key: str, failure: Exception | None, result: Any) -> Any:
        """The answer when the effect reconciler recorded an outcome before the performer could
        (its call outlasted the reconciler's wait): the record, which every later caller is
        answered, not what the call said. A recorded success is returned (the provider made it,
        even where the call failed, say a client's timeout after the provider accepted); a
        recorded failure is raised, the call's own error when it failed too, EffectDisputed
        when it succeeded: the provider has it, and the ledger will go on saying it failed.

        No outcome yet: another performer took the effect over (EffectResumed: this one's
        lease had lapsed) and sends it again; the outcome is its to record, and this performer
        is told the effect is in its hands (EffectInProgress)."""
        found = seen(self.outcomes, self.stream(key))
        outcome = found.outcome if found is not None else None
        if outcome is None:
            holder = found.holder if found is not None else None
            raise EffectInProgress(key, holder.t if holder is not None else time.time())
        if isinstance(outcome, EffectSucceeded):
            return outcome.result
        if failure is not None:
            raise failure
        raise EffectDisputed(key, outcome.error, result)

    def orphaned(self, digest: str, found: Seen, fence: Fence | None) -> bool:
        """Whether a performer holding `fence` may take over the effect `found` and send it
        again: started for this request, unsettled, last taken under a fence that no longer
        stands, and the taker has a fence of its own (which the reconciler will see stand)."""
        started, holder = found.first, found.holder
        if not isinstance(started, EffectStarted) or started.request_hash != digest:
            return False  # another request: `answer` refuses it
        if found.outcome is not None or holder is None or fence is None:
            return False
        if holder.lease is None or holder.epoch is None:
            return False  # started unfenced: nothing says its performer is gone
        return not self.standing(holder)

    @staticmethod
    def unreached(
        digest: str, found: Seen, fence: Fence | None, again: Callable[[ErrorInfo], bool] | None
    ) -> bool:
        """Whether the effect `found`, recorded as failed, may be sent again under its key: the
        same request, its error one `again` says never got the provider's answer, and the
        taker has a fence (its EffectResumed holds the effect while it is sent)."""
        started, outcome = found.first, found.outcome
        return (
            again is not None
            and fence is not None
            and isinstance(started, EffectStarted)
            and started.request_hash == digest
            and isinstance(outcome, EffectFailed)
            and again(outcome.error)
        )

    def take_over(
        self,
        key: str,
        found: Seen,
        fence: Fence,
        guards: tuple[Guard, ...],
        run_id: str,
    ) -> None:
        """Append the EffectResumed at the version read (WrongExpectedVersion: somebody moved
        it first), fenced by the taker's lease and guarded like a start."""
        holder = found.holder
        resumed = EffectResumed(
            run_id=run_id,
            key=key,
            lease=fence[0],
            epoch=fence[1],
            after_lease=holder.lease if holder is not None else None,
            after_epoch=holder.epoch if holder is not None else None,
        )
        self.journal.append(self.stream(key), [resumed], found.version, fence=fence, guards=guards)

    def start(
        self,
        started: EffectStarted,
        guards: tuple[Guard, ...],
        reserve: Callable[[], Batch] | None,
    ) -> None:
        """Append the EffectStarted, and with it (one write) the hold `reserve` returns."""
        first: Batch = (self.stream(started.key), [started], 0)
        if reserve is None:
            self.journal.append(*first, guards=guards)
            return
        if not isinstance(self.journal, BatchJournal):
            raise TypeError(
                f"effect {started.key} holds part of a total: its journal "
                "must write several streams at once (append_batches)"
            )
        self.journal.append_batches([first, reserve()], guards=guards)

    def failed(self, key: str) -> bool:
        last = last_record(self.outcomes, self.stream(key))  # the outcome is the last record
        return last is not None and isinstance(last.event, EffectFailed)

    def started(self, key: str) -> bool:
        """Whether the key's effect was ever started: its stream's version, none of its
        records (which `recorded` reads, every one)."""
        return self.outcomes.version(self.stream(key)) > 0

    def recorded(self, key: str) -> list[Event]:
        """The effect's whole stream (what the audit shows); its state needs only `seen`."""
        return [r.event for r in self.outcomes.read(self.stream(key))]

    def wait(self, key: str, timeout: float, poll: float = 0.05) -> list[Event]:
        """The key's record once it has an outcome, or as it stands after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            recorded = self.recorded(key)
            if not recorded or outcome_of(recorded) is not None:
                return recorded
            if time.monotonic() >= deadline:
                return recorded
            time.sleep(poll)

    def settle(self, key: str, outcome: Event, at: int = 1) -> bool:
        """Record an effect's outcome at version `at` of its stream (1 after its start, more
        after takings over); False when somebody (the reconciler, or a performer that took it
        over) moved the stream first."""
        try:
            self.outcomes.append(self.stream(key), [outcome], at)
        except WrongExpectedVersion:
            return False
        return True

    def answer(self, key: str, digest: str, found: Seen) -> Any:
        started = found.first
        assert isinstance(started, EffectStarted)
        if started.request_hash != digest:
            raise EffectKeyReused(key)
        outcome = found.outcome
        if outcome is None:
            raise EffectInProgress(key, (found.holder or started).t)
        if isinstance(outcome, EffectFailed):
            raise EffectPreviouslyFailed(key, outcome.error)
        return outcome.result

    def standing(self, started: Taking) -> bool:
        """Whether the lease the effect was started (or last taken over) under still stands at
        its epoch (False for
        an effect started unfenced, or recorded before its fence was: its age alone, past the
        reconciler's wait, says its performer is done with it)."""
        if started.lease is None or started.epoch is None:
            return False
        return standing_epoch(last_record(self.outcomes, started.lease)) == started.epoch
