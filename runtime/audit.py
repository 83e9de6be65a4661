"""The audit trail of a run, as a fold: who approved or rejected what on which evidence, every
integration with the approval it relied on, every refusal and escalation (a conflict put before
a person among them), the harness's own checks, every human decision, and the money steps
(runtime/audit_effects.py). It keeps nothing between events but the ACCEPTs an integration may
cite (as notes); each entry is a row, keyed by its position.
"""

from __future__ import annotations

from typing import Any, ClassVar

from runtime import audit_effects, folds
from runtime.events import (
    BreakerTripped,
    CommitmentTransferred,
    ConflictParked,
    ConflictResolved,
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    DeadlockDetected,
    DelegationRefused,
    DuplicateWorkRefused,
    Integrated,
    IntegrationRefused,
    LivelockDetected,
    MessageSent,
    MutationRefused,
    ResumeRequested,
    RunInterrupted,
    RunResumed,
    SagaAborted,
    SagaCompensated,
    SagaCompensating,
    SagaStepCompleted,
    SagaUndoFailed,
    StatusNormalised,
    StopRequested,
    SuiteChecked,
    TaskEscalated,
    TeamFinished,
    shown,
)
from runtime.folds import Fold, State
from runtime.journal import Recorded


class Audit(Fold):
    """Who approved or rejected what on which evidence, every integration with the approval it
    relied on, every refusal and escalation, the harness's own checks, and every human decision.
    """

    name: ClassVar[str] = "audit"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        (
            "MessageSent",
            "Integrated",
            "IntegrationRefused",
            "TaskEscalated",
            "RunInterrupted",
            "RunResumed",
            "DeadLetterRetried",
            "DeadLetterDiscarded",
            "ConflictParked",
            "ConflictResolved",
            "DeadLettered",
            "SuiteChecked",
            "TeamFinished",
            "StopRequested",
            "ResumeRequested",
            "SagaStepCompleted",
            "SagaAborted",
            "SagaCompensating",
            "SagaCompensated",
            "SagaUndoFailed",
            "BreakerTripped",
            "MutationRefused",
            "StatusNormalised",
            # the coordination primitives' refusals and decisions (runtime/events/obligations.py)
            "DuplicateWorkRefused",
            "DeadlockDetected",
            "DelegationRefused",
            "LivelockDetected",
            "CommitmentTransferred",
            *audit_effects.KINDS,
        )
    )

    def step(self, state: State, rec: Recorded, out: folds.Out) -> None:
        e = rec.event
        if e.kind in audit_effects.KINDS:
            audit_effects.step(state, rec, out)  # money steps: who decided, how much, the ledger
            return
        entry: dict[str, Any] = {"position": rec.position, "what": e.kind, "task_id": e.task_id}
        if isinstance(e, MessageSent):
            performative = e.performative.lower()
            if performative == "accept" and e.message_id:
                out.note(e.message_id, rec.position)  # what an integration cites
            if performative not in ("accept", "reject"):
                return
            entry.update(
                what=e.performative.upper(), who=e.sender, to=e.recipient, evidence=e.payload
            )
        elif isinstance(e, Integrated):
            entry.update(
                who="harness",
                commit=e.commit,
                branch=e.branch,
                approval=e.approval,
                approved_by=e.approved_by,
                approval_position=self.position_of(out, e.approval),
            )
        elif isinstance(e, IntegrationRefused | TaskEscalated):
            entry.update(who="harness", why=e.reason)
        elif isinstance(
            e,
            RunInterrupted
            | RunResumed
            | DeadLetterRetried
            | DeadLetterDiscarded
            | StopRequested
            | ResumeRequested,
        ):
            entry.update(who=e.by, human=True, why=e.reason, when=e.t)
        elif isinstance(e, ConflictResolved):
            entry.update(
                who=e.by,
                human=True,
                why=e.reason,
                when=e.t,
                choice=e.choice,
                value=e.value,
                conflict=e.conflict_id,
            )
        elif isinstance(e, DeadLettered):
            entry.update(who="harness", why=e.reason, attempts=e.attempts, last_error=e.last_error)
        elif isinstance(e, ConflictParked):
            # An escalation to a person, as a dead letter is: the trail had the ruling and not
            # what was put before the person, nor when.
            said = "; ".join(
                f"{c.get('agent', '?')} said {shown(c.get('value'))}" for c in e.claims
            )
            why = f"the rules could not reconcile the claims on {e.subject} {e.predicate} "
            why += f"(a {e.conflict_type} conflict){': ' + said if said else ''}"
            entry.update(who="harness", why=f"{why}; parked for a person", conflict=e.conflict_id)
        elif isinstance(e, SuiteChecked):
            entry.update(
                who="harness", evidence={"passed": e.passed, "failed": e.failed, "ok": e.ok}
            )
        elif isinstance(e, TeamFinished):
            entry.update(what=f"TeamFinished:{e.status}", who="harness", why=e.reason)
        elif isinstance(e, SagaStepCompleted | SagaCompensated):
            # An effect done, or its reversal: the money steps and what undid them.
            entry.update(who="harness", saga=e.saga_id, step=e.step, key=e.key, result=e.result)
            entry.update(
                amount_cents=audit_effects.amount_of(e.result),
                ledger=audit_effects.ledger_entry(e.result),
            )
        elif isinstance(e, SagaCompensating):
            # An undo begun: with no SagaCompensated after it for the step, it is not known to
            # have gone through (its effect stream says how far it got).
            why = f"undo of {e.step} begun under key {e.key}; until its reversal is recorded, "
            why += "money may still be moved, and the undo is sent again under this key"
            entry.update(who="harness", saga=e.saga_id, step=e.step, key=e.key, why=why)
        elif isinstance(e, SagaAborted):
            entry.update(who="harness", saga=e.saga_id, step=e.failed_step, why=e.reason)
        elif isinstance(e, SagaUndoFailed):
            # An undo that did not go through: what is still done, for a person to settle.
            entry.update(who="harness", saga=e.saga_id, step=e.step, key=e.key, why=e.outstanding)
        elif isinstance(e, BreakerTripped):
            entry.update(who="harness", breaker=e.breaker, why=e.reason, rates=e.rates)
        elif isinstance(e, MutationRefused):
            # The gate's refusal: which check, for whom; nothing was written or merged.
            entry.update(what=f"MutationRefused:{e.check}", who="harness", why=e.reason)
            entry.update(actor=e.actor, capability=e.capability, key=e.key)
        elif isinstance(e, StatusNormalised):
            entry.update(who="harness", why=e.reason, said=e.said, status=e.status)
        elif isinstance(
            e,
            DuplicateWorkRefused
            | DeadlockDetected
            | DelegationRefused
            | LivelockDetected
            | CommitmentTransferred,
        ):
            # the harness refused or moved something an agent set out to do or held
            entry.update(who="harness", why=e.reason)  # the reason names the agent
        else:
            return
        out.add(rec.position, entry)

    @staticmethod
    def position_of(out: folds.Out, approval: str) -> int | None:
        """Where the ACCEPT an integration relies on was sent (Integrated.approval names an
        ACCEPT's message id; the newest, should an id have been sent twice)."""
        found = out.notes(approval)
        return found[-1] if found else None

    def result(self, state: State, rows: folds.Rows) -> list[dict[str, Any]]:
        return list(rows.rows.values())
