"""The answer: composed by the harness from verified findings and named fallbacks only."""

from __future__ import annotations

from runtime.events import AnswerComposed, SagaSettled, SagaUndoFailed, TeamFinished
from runtime.fanout.contracts import Handoff
from runtime.fanout.settle import Answer
from runtime.session import Session


def compose(
    session: Session,
    planned: list[tuple[str, Handoff]],
    answers: dict[str, Answer],
    refunded: SagaSettled | SagaUndoFailed | None = None,
) -> TeamFinished:
    """The answer, from verified findings and named fallbacks only; DEGRADED says what gave.
    A refund whose undo is outstanding (a person discarded its letter) ends the run escalated:
    money may still be moved, and the run says so."""
    lines: list[str] = []
    sources: list[str] = []
    notes: list[str] = []
    answered = 0
    for sub_id, _ in planned:
        report, note, cached = answers[sub_id]
        if note:
            notes.append(note)
        if report.ok and report.findings:
            answered += 1
            lines += [f"- {f.claim} [{f.source_tool} {f.source_call_id}]" for f in report.findings]
            sources += [f.source_call_id for f in report.findings]
        elif cached is not None:
            answered += 1
            lines.append(f"- {cached.text} [{cached.source}]")
            sources.append(cached.source)
    outstanding = refunded.outstanding if isinstance(refunded, SagaUndoFailed) else None
    if isinstance(refunded, SagaUndoFailed):
        notes.append(
            f"the refund did not go through ({refunded.failed_step} failed: {refunded.reason}) "
            f"and is not undone: {outstanding}"
        )
    elif refunded is not None and refunded.failed_step is None:
        lines.append(f"- Refunded: {', '.join(refunded.completed)} done [{refunded.saga_id}]")
    elif refunded is not None:
        undone = ", ".join(refunded.compensated) or "nothing"
        notes.append(
            f"the refund did not go through ({refunded.failed_step} failed: {refunded.error}); "
            f"undone: {undone}"
        )
    degraded = "; ".join(notes) or None
    text = "\n".join(lines) or "No part of the ticket could be answered."
    if degraded:
        text = f"DEGRADED: {degraded}\n{text}"
    session.emit(session.new(AnswerComposed, text=text, degraded=degraded, sources=sources))
    if outstanding is not None:
        status, reason = "escalated", f"HUMAN_REQUIRED: the refund's {outstanding}"
    elif answered == 0:
        status, reason = (
            "failed",
            "no sub-task was answered" + (f": {degraded}" if degraded else ""),
        )
    elif degraded:
        status, reason = "done", f"answered, DEGRADED: {degraded}"
    else:
        status, reason = "done", "answered from verified findings"
    finished = session.new(
        TeamFinished,
        status=status,
        reason=reason,
        summary={"answered": answered, "sub_tasks": len(planned), "degraded": degraded},
    )
    session.emit(finished)
    return finished
