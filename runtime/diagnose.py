"""Diagnosis from the journal alone: one finding per failure signature, citing its events.

    duplicate_work            two agents set out to write the same file
    unanswered_request        a REQUEST was delivered and its recipient neither replied nor ran
    done_without_evidence     a coder said DONE with no passing test run after its last edit
    transient_error_absorbed  a tool call failed, and the same call later succeeded
    reject_cap_reached        a task went back and forth between coder and reviewer until the
                              round cap escalated it
    accepted_failing_tests    a reviewer ACCEPTed a candidate whose own test run (the evidence it
                              was shown) fails; says whether the merge was refused or, in a
                              journal from before the gate read the tests, went ahead
    budget_exhausted          an agent ran out of budget with its task unfinished
    turn_cap_reached          an agent used every turn it had with its task unfinished
    no_tool_call              an agent answered in prose twice in a row (asked once for a tool
                              call between) and its loop stopped inconclusive
    missed_deadline           an agent asked for a reply let its deadline pass (absent, or present
                              and silent), once or more, on one task
    looping_agent             an agent made the same tool call (same tool, same arguments), or met
                              the same failure, three times in a row; or the loop breaker stopped it
    degraded_subtask          a fan-out sub-task ended without one verified finding (failed,
                              refused, timed out, or `ok` on claims its tool results do not back)
    breaker_tripped           a circuit breaker opened: calls behind it were refused
    saga_compensated          a saga step failed and the steps before it were undone
    orphaned_commitment       a commitment (or a request an agent took up) still open when the
                              run finished
    deadlock                  a wait closed a cycle of waits (requests, leases): broken by the
                              wait-for graph's rule, or never
    delegation_cycle          a delegation went back to an agent already on its chain
    delegation_too_deep       a delegation chain went deeper than the limit
    livelock                  a task reopened, a fact flipping back, or a conflict met again,
                              again and again
    stalled_run               nobody drove the run for a while although it was not over: its
                              driver's lease ran out, or no step came after one gave it back
    suite_not_run             the harness's own run of the suite ran no test, and says why (the
                              sandbox could not start, the run timed out)
    limit_not_enforced        a limit of the sandbox was not enforced where agent code ran (the
                              process limit, for a worker as root with no pids cgroup), once
                              per run, with what to do about it

Each signature is a fold (see `folds`), so a projector can keep findings current event by event:
a finding is a row, added when the signature shows, replaced as it grows, dropped when later
events answer it; each signature's state keeps only what later events can still change.
Works on the reference runtime's flat journals too (no ids, no args, no ModelCalled).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from runtime import folds
from runtime.folds import Fold, Out, Rows, State
from runtime.journal import Recorded
from runtime.signatures.agents import (
    AcceptedFailingTests,
    BudgetExhaustion,
    DoneWithoutEvidence,
    DuplicateWork,
    NoToolCalls,
    RejectCaps,
    TransientErrors,
    TurnCaps,
    UnansweredRequests,
)
from runtime.signatures.base import Finding, team_roles
from runtime.signatures.gate import MutationRefusals, UnknownStatuses
from runtime.signatures.guards import (
    BreakerTrips,
    DegradedSubtasks,
    LoopingAgents,
    MissedDeadlines,
    SagaCompensations,
)
from runtime.signatures.limits import LimitNotEnforced
from runtime.signatures.obligations import (
    Deadlocks,
    DelegationLimits,
    Livelocks,
    OrphanedCommitments,
)
from runtime.signatures.stalls import Stalls
from runtime.signatures.suite import SuiteNotRun

__all__ = ["SIGNATURES", "Diagnosis", "DuplicateWork", "Finding", "diagnose", "team_roles"]

SIGNATURES: tuple[Fold, ...] = (
    DuplicateWork(),
    UnansweredRequests(),
    DoneWithoutEvidence(),
    TransientErrors(),
    RejectCaps(),
    AcceptedFailingTests(),
    BudgetExhaustion(),
    TurnCaps(),
    NoToolCalls(),
    MissedDeadlines(),
    LoopingAgents(),
    DegradedSubtasks(),
    BreakerTrips(),
    SagaCompensations(),
    MutationRefusals(),
    UnknownStatuses(),
    OrphanedCommitments(),
    Deadlocks(),
    DelegationLimits(),
    Livelocks(),
    Stalls(),
    SuiteNotRun(),
    LimitNotEnforced(),
)


class Diagnosis(Fold):
    """Every signature at once; the result is the findings in order of their first event."""

    name: ClassVar[str] = "findings"
    kinds: ClassVar[frozenset[str] | None] = frozenset().union(*(s.kinds or () for s in SIGNATURES))

    def start(self) -> State:
        return {s.name: s.start() for s in SIGNATURES}

    def step(self, state: State, rec: Recorded, out: Out) -> None:
        kind = rec.event.kind
        for s in SIGNATURES:
            if s.kinds is None or kind in s.kinds:
                # setdefault: a state stored before a signature was added lacks its part
                s.step(state.setdefault(s.name, s.start()), rec, out.part(s.name))

    def result(self, state: State, rows: Rows) -> list[Finding]:
        found = [
            f
            for s in SIGNATURES
            for f in s.result(state.get(s.name) or s.start(), rows.part(s.name))
        ]
        return sorted(found, key=lambda f: f["positions"][0])


def diagnose(records: Sequence[Recorded]) -> list[Finding]:
    """Every finding in the run, in the order of the first event that shows it."""
    result: list[Finding] = folds.run(Diagnosis(), records)
    return result
