"""Settling a fan-out's reports: check an ok one, route a failed one and carry the route out.

A failed sub-task is routed on its reason code (`routing.route`, with the team's policy): a
retry runs the specialist again with its new brief; a fallback answers from a named cache and
makes the answer degraded; an escalation is journalled (TaskEscalated) and, where runs park
(on the workers), waits in the dead-letter queue for a person, who retries it (the specialist
runs again) or discards it (the answer goes on without it).
"""

from __future__ import annotations

from dataclasses import replace

from runtime.events import TaskEscalated, WorkerReported
from runtime.fanout import routing
from runtime.fanout.contracts import Handoff, Report
from runtime.fanout.engine import Crew, check, fan_out, hand_off
from runtime.session import Session

# A sub-task's answer: its report, what is missing from it (None: nothing), and the cached
# answer it fell back on (None: none).
Answer = tuple[Report, str | None, routing.Cached | None]


def settle(
    session: Session,
    sub_id: str,
    handoff: Handoff,
    report: Report,
    crew: Crew,
    policy: routing.RecoveryPolicy,
    park: bool = False,
) -> Answer:
    """Record a sub-task's report; check an ok one, route a failed one and act on the route."""
    session.emit(session.new(WorkerReported, task_id=sub_id, report=report.model_dump(mode="json")))
    if report.ok:
        return check(session, sub_id, report), None, None
    attempt = routing.Attempt(handoff=handoff)
    action = routing.route(report, attempt, policy)
    routed = routing.routed_event(report, attempt, action, session.run_id)
    session.emit(routed.model_copy(update={"task_id": sub_id}))
    return resolve(session, sub_id, handoff, report, action, crew, park)


def resolve(
    session: Session,
    sub_id: str,
    handoff: Handoff,
    report: Report,
    action: routing.Retry | routing.Reassign | routing.Fallback | routing.Escalate,
    crew: Crew,
    park: bool = False,
) -> Answer:
    """Carry out the router's decision for one failed sub-task (see the module docstring)."""
    one = replace(crew, cap=1)
    if isinstance(action, routing.Retry):
        again = action.handoff
        retry_id = f"{sub_id}r"
        hand_off(session, retry_id, again, crew, attempt=2)
        retried = fan_out(session, [(retry_id, again)], one)[retry_id]
        session.emit(
            session.new(
                WorkerReported, task_id=sub_id, report=retried.model_dump(mode="json"), attempt=2
            )
        )
        if retried.ok:
            return check(session, retry_id, retried), None, None
        return retried, f"{handoff.worker_id} failed twice ({retried.reason})", None
    if isinstance(action, routing.Fallback):
        cached = routing.Cached(source=action.source, text=action.text)
        why = f"{report.degraded}; {action.degraded}" if report.degraded else action.degraded
        return report, why, cached
    reason = f"{handoff.worker_id} escalated: {getattr(action, 'reason', str(action))}"
    last_error = report.degraded or str(report.reason)
    session.emit(session.new(TaskEscalated, task_id=sub_id, reason=reason, last_error=last_error))
    if not park:
        return report, reason, None
    if session.dead_letter(reason, 1, last_error, task_id=sub_id) == "discard":
        return report, f"{reason}; a person discarded the sub-task", None
    again_id = f"{sub_id}p"
    hand_off(session, again_id, handoff, crew, attempt=2)
    rerun = fan_out(session, [(again_id, handoff)], one)[again_id]
    session.emit(
        session.new(WorkerReported, task_id=sub_id, report=rerun.model_dump(mode="json"), attempt=2)
    )
    if rerun.ok:
        return check(session, again_id, rerun), None, None
    return rerun, f"{reason}; retried by a person, it failed again ({rerun.reason})", None
