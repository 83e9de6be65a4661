"""A step's reads of its run's control stream as they were before 2026-12-06, each reading the
stream whole: bench/control_reads.py's baseline, and the answers
tests/tasks/test_control_reads_are_bounded.py holds the seeking reads to. Kept as they were, in
one place."""

from __future__ import annotations

from journal_store.journal import Recorded
from runtime import streams
from runtime.events import (
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    EventFormatError,
    ResumeRequested,
    StepFailed,
    StopRequested,
)
from runtime.stops import StopRequest
from services.control import Control, Failing


def parked_on_before(control: Control) -> tuple[DeadLettered | None, EventFormatError | None]:
    read = control.journal.readings("WHERE stream = %s ORDER BY version", [control.stream])
    unread = read.unreadable[-1].error if read.unreadable else None
    open_: dict[str, Recorded] = {}
    for record in read.records:
        e = record.event
        if isinstance(e, DeadLettered):
            open_[e.letter_id] = record
        elif isinstance(e, DeadLetterRetried | DeadLetterDiscarded):
            open_.pop(e.letter_id, None)
    letters = list(open_.values())
    if unread is not None and unread.row and letters and letters[-1].position > unread.row[0]:
        unread = None
    letter = letters[0].event if letters else None
    return (letter if isinstance(letter, DeadLettered) else None), unread


def retried_at_before(control: Control) -> int:
    retried = [
        r.position
        for r in control.journal.read(control.stream)
        if isinstance(r.event, DeadLetterRetried)
    ]
    return retried[-1] if retried else 0


def stop_request_before(control: Control) -> StopRequest | None:
    for e in reversed(control.events()):
        if isinstance(e, StopRequested):
            return StopRequest(by=e.by, reason=e.reason)
        if isinstance(e, ResumeRequested):
            return None
    return None


def resumed_by_before(control: Control) -> str:
    for e in reversed(control.events()):
        if isinstance(e, ResumeRequested):
            return e.by
    return "operator"


def failing_before(control: Control) -> Failing | None:
    head = control.journal.last(streams.journal(control.run_id))
    records = control.journal.read(control.stream)
    retried = [r.position for r in records if isinstance(r.event, DeadLetterRetried)]
    moved = max([head.position if head else 0, *retried])
    failed = [r.event for r in records if r.position > moved and isinstance(r.event, StepFailed)]
    return Failing(since=failed[0].t, tries=len(failed), last_error="", outage=True)


def requests_before(control: Control) -> tuple[Recorded | None, int]:
    records = control.journal.read(control.stream)
    version = records[-1].version if records else 0
    for r in reversed(records):
        if isinstance(r.event, StopRequested | ResumeRequested):
            return r, version
    return None, version
