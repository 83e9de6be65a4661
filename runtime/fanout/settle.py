"""Settling a fan-out's reports: check an ok one, route a failed one and carry the route out.

A failed sub-task is routed on its reason code (`routing.route`, with the team's policy): a
retry runs the specialist again with its new brief; a fallback answers from a named cache and
makes the answer degraded; an escalation is journalled (TaskEscalated) and, where runs park
(on the workers), waits in the dead-letter queue for a person, who retries it (the specialist
runs again) or discards it (the answer goes on without it).

Whether a sub-task is DEGRADED is the harness's call, not the worker's: a sub-task that ends
without at least one verified finding (it failed, refused, missed its deadline, or reported
`ok` on claims its own tool results do not back) is degraded, with a note naming the sub-task
and why, and a SubtaskDegraded event. A worker's own `status` and `degraded` are what it says;
this is what the journal shows.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from runtime.events import SubtaskDegraded, TaskEscalated, WorkerReported
from runtime.fanout import routing
from runtime.fanout.contracts import Handoff, Report
from runtime.fanout.engine import Crew, checked, fan_out, hand_off, replayed
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
    """Record a sub-task's report; check an ok one, route a failed one and act on the route;
    then judge the outcome (see the module docstring)."""
    session.emit(session.new(WorkerReported, task_id=sub_id, report=report.model_dump(mode="json")))
    if report.ok:
        answer = verified(session, sub_id, handoff, report)
    else:
        attempt = routing.Attempt(handoff=handoff)
        action = routing.route(report, attempt, policy)
        routed = routing.routed_event(report, attempt, action, session.run_id)
        session.emit(routed.model_copy(update={"task_id": sub_id}))
        answer = resolve(session, sub_id, handoff, report, action, crew, park)
    return judged(session, sub_id, handoff, answer)


def verified(
    session: Session, sub_id: str, handoff: Handoff, report: Report, run_as: str | None = None
) -> Answer:
    """An ok report with its unsupported findings dropped; when none is left, the note says
    the sub-task has no verified finding and why (the worker's `ok` is only its word).
    `run_as`: the id the report's run went by (a retry's), when not the sub-task's own."""
    kept, unsupported = checked(session, run_as or sub_id, report)
    if kept.findings:
        return kept, None, None
    if unsupported:
        reasons = Counter(u.reason for u in unsupported)
        why = f"its {len(unsupported)} finding(s) were not backed by its own tool results (" + (
            ", ".join(f"{n} {reason}" for reason, n in sorted(reasons.items())) + ")"
        )
    else:
        why = "it reported ok with no findings"
    return kept, f"{named(sub_id, handoff)} has no verified finding: {why}", None


def named(sub_id: str, handoff: Handoff) -> str:
    """A sub-task as the answer names it: its worker, its id and the question it was asked."""
    return f"{handoff.worker_id} on {sub_id} ({handoff.objective.rstrip('.')})"


def judged(session: Session, sub_id: str, handoff: Handoff, answer: Answer) -> Answer:
    """The harness's verdict on a settled sub-task: without a verified finding it is degraded,
    whatever the worker reported, and SubtaskDegraded says why.

    The event is journalled where the run is live (a journal written before it existed has
    none at this place, and still replays)."""
    report, note, cached = answer
    if report.ok and report.findings:
        return answer
    name = named(sub_id, handoff)
    why = note or f"{name} has no verified finding ({report.reason})"
    event = session.new(
        SubtaskDegraded,
        task_id=sub_id,
        agent=handoff.worker_id,
        worker_id=handoff.worker_id,
        objective=handoff.objective,
        why=why if why.startswith(name) else f"{name}: {why}",
        fallback=cached.source if cached is not None else None,
    )
    replayed(session, (SubtaskDegraded,), [event])
    return report, why, cached


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
            return verified(session, sub_id, again, retried, retry_id)
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
        return verified(session, sub_id, handoff, rerun, again_id)
    return rerun, f"{reason}; retried by a person, it failed again ({rerun.reason})", None
