"""Sagas: multi-step side effects that walk backward when a later step fails.

There is no transaction across a payment provider, a mail server and a ticket system, so each
step brings its own undo. A `Saga` performs every action, and later every compensation,
through the effect `Ledger`, and keeps its own account in the stream `saga-<id>`:

    effect-<key>   (the Ledger's)  who performs an action or an undo, and its outcome: exactly
                                   once per key, whoever asks and however often
    saga-<id>      (the saga's)    SagaStepCompleted per step done, in order; SagaAborted once;
                                   SagaCompensating per step whose undo was begun, before its
                                   call; SagaCompensated per step undone

Why both, rather than the effect streams alone: the effect streams say what happened to one
key, but not which keys make up this saga, in which order, or that it was abandoned. The saga
stream is that index, readable in one go; the effect streams keep the exactly-once guarantee.
A crash between the two is harmless: the Ledger answers the replayed call with the recorded
outcome (without calling anything) and the saga writes the missing line.

Keys are derived, never made up: a step's key from the saga id, the step name and its payload;
its undo's key from the saga id, the step name and the step's key. So a resumed saga (a new
object on the same journal and id, after a crash) finds every key it had, and neither an
action nor an undo runs twice.

A step whose provider deduplicates on the key declares it (`resend=True`, for the action and
its compensation): a step or undo left started and unsettled by a performer that is gone (its
lease no longer stands) is then sent again under its key, and the provider's first answer is
what the saga records, rather than EffectInProgress turning the saga back with that step's
effect at the provider and no undo owed for it (`Ledger.perform`). And an undo of such a step
that failed without the provider's answer (it was down) is sent again under its key by a later
`compensate(again=...)`, the caller saying which failures are of that sort: the provider's own
refusal is its answer, and stands.

An undo is on the saga's stream before its call goes out (SagaCompensating, with its key), so
an undo begun and not finished (its driver died mid-call, or its provider was not reached) is
there to see beside the steps it undoes, not only in its effect stream: the audit shows it
until its SagaCompensated, and the next `compensate` sends it again under that same key.

Callables are not journalled. A resumed driver re-runs its `step` calls, which return recorded
results without acting and register the compensations again; or it registers them with `undo`.
Step results are journalled, so they must be JSON data (a JsonlJournal hands them back parsed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from runtime import errors
from runtime.coordination.effects import EffectInProgress, EffectPreviouslyFailed, Ledger
from runtime.coordination.keys import effect_key
from runtime.coordination.mutation import Mutation
from runtime.events import (
    ErrorInfo,
    Event,
    SagaAborted,
    SagaCompensated,
    SagaCompensating,
    SagaStepCompleted,
)
from runtime.journal import Journal, WrongExpectedVersion

Action = Callable[[str], Any]
Compensation = Callable[[str, Any], Any]

_RACE_ATTEMPTS = 20


class SagaError(Exception):
    """Base of the saga's typed refusals."""


class SagaClosed(SagaError):
    """The saga was aborted: it takes no new steps, it only compensates."""


class StepConflict(SagaError):
    """A step name came back with another payload than the one it completed with."""


class MissingCompensation(SagaError):
    """A completed step has no compensation registered in this process (after a resume)."""


class CompensationFailed(SagaError):
    """An undo failed (`key` its idempotency key, `info` its error as recorded). The steps
    before it stay done: what now is a person's call (dead-letter it). A later `compensate`
    sends the same key again only where the caller says the failure never got the provider's
    answer (`compensate(again=...)`); a provider's refusal is its answer to the key."""

    def __init__(self, step: str, error: str, key: str = "", info: ErrorInfo | None = None):
        super().__init__(f"compensating step {step!r} failed: {error}")
        self.step = step
        self.error = error
        self.key = key
        self.info = info or ErrorInfo(type="CompensationFailed", message=error)


@dataclass
class SagaState:
    """The saga as its stream tells it."""

    version: int = 0
    completed: dict[str, SagaStepCompleted] = field(default_factory=dict)  # in completion order
    compensated: dict[str, SagaCompensated] = field(default_factory=dict)
    begun: dict[str, SagaCompensating] = field(default_factory=dict)  # undos begun, by step
    aborted: SagaAborted | None = None

    @property
    def undoing(self) -> list[str]:
        """The steps whose undo was begun and is not recorded done: in flight, or failed
        without the provider's answer (sent again under its key by the next `compensate`)."""
        return [step for step in self.begun if step not in self.compensated]


def fold(events: list[Event]) -> SagaState:
    state = SagaState(version=len(events))
    for event in events:
        if isinstance(event, SagaStepCompleted):
            state.completed.setdefault(event.step, event)
        elif isinstance(event, SagaCompensated):
            state.compensated.setdefault(event.step, event)
        elif isinstance(event, SagaCompensating):
            state.begun.setdefault(event.step, event)
        elif isinstance(event, SagaAborted) and state.aborted is None:
            state.aborted = event
    return state


class Saga:
    def __init__(
        self,
        journal: Journal,
        saga_id: str,
        run_id: str = "",
        ledger: Ledger | None = None,
        mutation: Mutation | None = None,
    ) -> None:
        self.journal = journal
        self.saga_id = saga_id
        self.run_id = run_id
        self.ledger = ledger or Ledger(journal)
        # With a gated ledger, each step is this mutation (what, by whom, under which intent)
        # at the mutation gate. Undoing is not gated: a superseded intent is a reason to undo,
        # never to keep what was done, so compensations go through an ungated ledger.
        self.mutation = mutation
        self.undoing = Ledger(self.ledger.journal, self.ledger.outcomes)
        self._undo: dict[str, Compensation] = {}
        self._resend: dict[str, bool] = {}  # per step: its provider deduplicates on the key

    @property
    def stream(self) -> str:
        return f"saga-{self.saga_id}"

    def state(self) -> SagaState:
        return fold([r.event for r in self.journal.read(self.stream)])

    @property
    def completed(self) -> list[str]:
        return list(self.state().completed)

    @property
    def compensated(self) -> list[str]:
        return list(self.state().compensated)

    @property
    def aborted(self) -> bool:
        return self.state().aborted is not None

    def step_key(self, name: str, payload: Any = None) -> str:
        return effect_key(self.saga_id, f"step:{name}", self.stream, payload)

    def undo_key(self, name: str, step_key: str) -> str:
        return effect_key(self.saga_id, f"undo:{name}", self.stream, step_key)

    # --- going forward --------------------------------------------------------------------

    def step(
        self,
        name: str,
        action: Action,
        compensation: Compensation,
        payload: Any = None,
        resend: bool = False,
    ) -> Any:
        """Perform `action(key)` once and owe `compensation(key, result)` if the saga aborts.

        A step already completed (a replay after a crash) returns its recorded result without
        acting. An action that raises is recorded as failed by the Ledger and the exception
        propagates: the caller decides to `compensate`.

        `resend`: the action's and the compensation's provider deduplicates on the key, so
        either, found unsettled with its performer gone, may be sent again (module docstring).
        """
        key = self.step_key(name, payload)
        done = self.state().completed.get(name)
        if done is not None:
            if done.key != key:
                raise StepConflict(f"step {name!r} completed with another payload")
            self.undo(name, compensation, resend)
            return done.result
        if self.aborted:
            raise SagaClosed(f"saga {self.saga_id} was aborted; step {name!r} not started")
        mutation = self.mutation
        if mutation is not None:
            mutation = replace(mutation, what=f"{mutation.what}: step {name}", expected_key=key)
        result = self.ledger.perform(
            key,
            "saga-step",
            f"{self.stream}/{name}",
            payload,
            action,
            run_id=self.run_id,
            mutation=mutation,
            resend=resend,
        )
        self.undo(name, compensation, resend)
        self._record(
            SagaStepCompleted(
                run_id=self.run_id, saga_id=self.saga_id, step=name, key=key, result=result
            ),
            lambda state: name in state.completed,
        )
        return result

    def undo(self, name: str, compensation: Compensation, resend: bool = False) -> None:
        """Register a step's compensation without replaying the step (for a resumed saga);
        `resend` as in `step`."""
        self._undo[name] = compensation
        self._resend[name] = resend

    # --- going backward -------------------------------------------------------------------

    def compensate(
        self,
        reason: str = "",
        failed_step: str | None = None,
        again: Callable[[ErrorInfo], bool] | None = None,
    ) -> list[str]:
        """Undo every completed step, last first, each exactly once across calls and crashes.

        Returns the steps this call recorded as compensated, in the order it undid them (an
        empty list when an earlier call already did everything). Stops at the first undo that
        fails, with CompensationFailed, or is in doubt, with EffectInProgress: undoing an
        earlier step while a later one still stands could leave a state no forward run ever
        produced.

        `again`: which recorded failures of an undo never got the provider's answer, so that
        its key is sent again here (a step declared `resend` only: its provider deduplicates).
        """
        self._record(
            SagaAborted(
                run_id=self.run_id, saga_id=self.saga_id, reason=reason, failed_step=failed_step
            ),
            lambda state: state.aborted is not None,
        )
        state = self.state()
        owed = [s for s in reversed(state.completed.values()) if s.step not in state.compensated]
        missing = [s.step for s in owed if s.step not in self._undo]
        if missing:
            # Checked before undoing anything: half a compensation is worse than none yet.
            raise MissingCompensation(f"no compensation registered for steps {missing}")
        return [done.step for done in owed if self._compensate_one(done, again)]

    def _compensate_one(
        self, done: SagaStepCompleted, again: Callable[[ErrorInfo], bool] | None = None
    ) -> bool:
        undo = self._undo[done.step]
        key = self.undo_key(done.step, done.key)
        # Before the call: a driver that dies in it leaves the undo begun on the saga's
        # stream, under the key the next one sends again (once per step: a resend adds none).
        self._record(
            SagaCompensating(run_id=self.run_id, saga_id=self.saga_id, step=done.step, key=key),
            lambda state: done.step in state.begun,
        )
        try:
            result = self.undoing.perform(
                key,
                "saga-compensation",
                f"{self.stream}/{done.step}",
                {"step": done.step, "step_key": done.key},
                lambda k: undo(k, done.result),
                run_id=self.run_id,
                resend=self._resend.get(done.step, False),
                again=again,
            )
        except EffectInProgress:
            # Started and never settled (a crash, or another driver right now): in doubt, not
            # failed. `reconciler.reconcile` settles it, or (a deduplicating provider's, once its
            # performer is gone) the next compensate sends it again; then compensate again.
            raise
        except EffectPreviouslyFailed as exc:
            raise CompensationFailed(done.step, str(exc.error), key, exc.error) from exc
        except Exception as exc:
            error = errors.describe(exc)
            raise CompensationFailed(done.step, str(error), key, error) from exc
        return self._record(
            SagaCompensated(
                run_id=self.run_id, saga_id=self.saga_id, step=done.step, key=key, result=result
            ),
            lambda state: done.step in state.compensated,
        )

    # --- the saga's stream ----------------------------------------------------------------

    def _record(self, event: Event, already: Callable[[SagaState], bool]) -> bool:
        """Append `event` unless the stream already says it (False then); a lost race just
        means reading again (the winner may well have written the same fact)."""
        for _ in range(_RACE_ATTEMPTS):
            state = self.state()
            if already(state):
                return False
            try:
                self.journal.append(self.stream, [event], state.version)
                return True
            except WrongExpectedVersion:
                continue
        raise SagaError(f"saga {self.saga_id}: lost {_RACE_ATTEMPTS} races to append")
