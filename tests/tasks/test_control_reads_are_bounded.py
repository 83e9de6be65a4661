"""A step's reads of its run's control stream (services/control.py) read what each answer
needs, not the stream: it grows by every failed step, stall, request and letter a run has had,
and read whole several times a step, a long run with a flaky endpoint paid for all of them at
every step (bench/control_reads.py has the figures). Each answer is held to the whole read's
(the reads as they were, kept in bench/control_before.py), on SQLite and PostgreSQL, as the stream grows and as its
rows are rewritten behind the journal's back."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from bench.control_before import parked_on_before
from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime import streams
from runtime.events import (
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    ErrorInfo,
    EventFormatError,
    ModelResponded,
    ResumeRequested,
    RunStalled,
    StepFailed,
    StopRequested,
    Usage,
)
from services import parking
from services.control import Control
from tests.conftest import on_every_backend
from tests.coordination.counting import counting_rows

pytestmark = on_every_backend()


def said(answer: tuple[Any, Any]) -> tuple[Any, Any]:
    """An answer as compared: the letter's id, and the row the error names."""
    letter, unread = answer
    return (letter.letter_id if letter else None), (unread.row if unread else None)


def whole(control: Control) -> dict[str, Any]:
    events = [r.event for r in control.journal.read(control.stream)]
    requests = [e for e in events if isinstance(e, StopRequested | ResumeRequested)]
    resumes = [e for e in events if isinstance(e, ResumeRequested)]
    decisions = [e for e in events if isinstance(e, DeadLetterRetried | DeadLetterDiscarded)]
    retried = [
        r.position
        for r in control.journal.read(control.stream)
        if isinstance(r.event, DeadLetterRetried)
    ]
    return {
        "stop": requests[-1].by if requests and isinstance(requests[-1], StopRequested) else None,
        "resumed_by": resumes[-1].by if resumes else "operator",
        "retried_at": retried[-1] if retried else 0,
        "discarded": (
            decisions[-1].letter_id
            if decisions and isinstance(decisions[-1], DeadLetterDiscarded)
            else None
        ),
        "request": requests[-1].id if requests else None,
    }


def asked(control: Control) -> dict[str, Any]:
    stop, discarded = control.stop_request(), control.discarded()
    request, version = control.requests()
    assert version == control.journal.version(control.stream)
    return {
        "stop": stop.by if stop else None,
        "resumed_by": control.resumed_by(),
        "retried_at": control.retried_at(),
        "discarded": discarded.letter_id if discarded else None,
        "request": request.event.id if request else None,
    }


def same(control: Control) -> None:
    """Every answer is the whole read's: in this process (its fold of the stream brought up to
    date) and in a process that never looked at the run (the fold made anew)."""
    assert said(control.parked_on()) == said(parked_on_before(control))
    kept = dict(parking._folds)
    parking._folds.clear()
    assert said(control.parked_on()) == said(parked_on_before(control))
    parking._folds.update(kept)
    read = control.journal.readings("WHERE stream = %s", [control.stream])
    if not read.unreadable:  # with one, the whole read raised; the step is parked on it first
        assert asked(control) == whole(control)


# --- building a control stream ----------------------------------------------------------------


@pytest.fixture
def control(alias):
    run = f"r-{uuid.uuid4().hex[:8]}"
    journal = DjangoJournal(alias)
    journal.append(streams.journal(run), [said_something(run, n) for n in range(3)], 0)
    return Control(run, journal)


def said_something(run: str, n: int) -> ModelResponded:
    usage = Usage(total=2, prompt=1, completion=1)
    return ModelResponded(
        run_id=run, agent="a", turn=n, task_id="T1", text="hi", tool_calls=[], usage=usage
    )


def failed(control: Control, at: int = 3, message: str = "timed out") -> None:
    error = ErrorInfo(type="TimeoutError", message=message)
    control.append(StepFailed(run_id=control.run_id, at_version=at, error=error))


def letter(control: Control, n: int) -> str:
    letter_id = f"{control.run_id}:control:{n}"
    control.append(DeadLettered(run_id=control.run_id, letter_id=letter_id, reason="kept dying"))
    return letter_id


def decide(control: Control, letter_id: str, retry: bool = True) -> None:
    cls = DeadLetterRetried if retry else DeadLetterDiscarded
    control.append(cls(run_id=control.run_id, letter_id=letter_id, by="ann", reason="x"))


def spoil(control: Control, version: int) -> StoredEvent:
    """The row at `version` rewritten so no event model reads it."""
    row = StoredEvent.objects.using(control.journal.using).get(
        stream=control.stream, version=version
    )
    StoredEvent.objects.using(control.journal.using).filter(position=row.position).update(
        data=json.dumps({**json.loads(row.data), "run_id": {"<b>x</b>": 1}})
    )
    return row


def mend(control: Control, row: StoredEvent) -> None:
    """The row as it was written."""
    found = StoredEvent.objects.using(control.journal.using).filter(position=row.position)
    found.update(data=row.data)


# --- the answers --------------------------------------------------------------------------------


def test_open_and_decided_letters_as_the_stream_grows(control):
    same(control)
    for n in range(1, 7):
        failed(control)
        same(control)
        first = letter(control, n)
        same(control)
        assert control.open_letter().letter_id == first
        decide(control, first, retry=n % 3 != 0)
        same(control)
        assert control.open_letter() is None
    second, third = letter(control, 7), letter(control, 8)
    same(control)
    assert control.open_letter().letter_id == second  # the oldest open one
    decide(control, second, retry=False)
    same(control)
    assert control.open_letter().letter_id == third


def test_an_unreadable_row_before_and_after_a_letter(control):
    failed(control)
    failed(control)
    same(control)
    early = spoil(control, 1)
    letter_id = letter(control, 1)
    same(control)  # the letter was written after the row: parked on the letter alone
    assert control.parked_on()[1] is None and control.open_letter().letter_id == letter_id
    failed(control)
    late = spoil(control, control.journal.version(control.stream))
    same(control)
    assert control.parked_on()[1].row[0] == late.position
    decide(control, letter_id)
    same(control)
    mend(control, late)
    same(control)  # mended: the earlier row is what parks it again
    assert control.parked_on()[1].row[0] == early.position
    mend(control, early)
    same(control)
    assert control.parked_on() == (None, None)


def held(found: Any, depth: int = 0) -> list[Any]:
    """What `found` holds through its containers, its dataclass fields, an error's cause and
    context and its traceback's frames' locals: where a raw row kept alive would be."""
    out = [found]
    if depth > 8:
        return out
    inner: list[Any] = []
    if isinstance(found, dict):
        inner = [*found.keys(), *found.values()]
    elif isinstance(found, list | tuple | set):
        inner = list(found)
    elif isinstance(found, parking.Fold):
        inner = list(vars(found).values())
    elif isinstance(found, BaseException):
        inner = [found.__cause__, found.__context__]
        tb = found.__traceback__
        while tb is not None:
            inner.append(dict(tb.tb_frame.f_locals))
            tb = tb.tb_next
    for x in inner:
        if x is not None and not isinstance(x, str | int | float | bytes):
            out += held(x, depth + 1)
    return out


def test_a_fold_keeps_the_newest_unreadable_rows_error_and_no_raw_row(control):
    """The answer says the newest unreadable row's error, and the re-check needs the others'
    positions only: the fold keeps no other error, and none that holds a row as read (a
    traceback's frames held the read's every row)."""
    for _ in range(4):
        failed(control)
    spoilt = [spoil(control, version) for version in (1, 2, 3)]
    raw = {row.position for row in spoilt}
    for _ in range(2):  # the first fold, then one brought up to date
        same(control)
        [fold] = [f for key, f in parking._folds.items() if key[2] == control.stream]
        kept = held(fold)
        errors = [x for x in kept if isinstance(x, EventFormatError)]
        assert [e.row[0] for e in errors] == [spoilt[-1].position]
        rows = [x for x in kept if isinstance(x, tuple) and len(x) == 12 and x[0] in raw]
        assert rows == [], f"the fold holds {len(rows)} raw rows"
        failed(control)
    mend(control, spoilt[-1])
    same(control)  # the others' positions kept: the one before parks it now
    assert control.parked_on()[1].row[0] == spoilt[-2].position


def test_the_rows_an_answer_stands_on_are_read_again_a_chunk_at_a_time(control, monkeypatch):
    """The re-check of the open letters and unreadable rows asks for them CHUNK positions a
    statement, where one statement asked for all: PostgreSQL refuses one of more than 65,535
    parameters. Here a chunk is 2 positions, and a change in the last chunk is seen."""
    failed(control)
    failed(control)
    spoilt = [spoil(control, 1), spoil(control, 2)]
    letters = [letter(control, n) for n in range(1, 6)]
    same(control)  # folded: 2 unreadable rows and 5 open letters stand
    read = control.journal.readings("WHERE stream = %s", [control.stream])
    standing = {row.position for row in spoilt} | {
        r.position for r in read.records if isinstance(r.event, DeadLettered)
    }
    assert len(standing) == 7
    monkeypatch.setattr(parking, "CHUNK", 2, raising=False)
    asked: list[list[int]] = []
    readings = DjangoJournal.readings

    def noting(journal: DjangoJournal, where: str, params: Any) -> Any:
        if where.startswith("WHERE position IN"):
            asked.append(list(params))
        return readings(journal, where, params)

    monkeypatch.setattr(DjangoJournal, "readings", noting)
    failed(control)
    assert control.parked_on()[0].letter_id == letters[0]
    assert [len(chunk) for chunk in asked] == [2, 2, 2, 1]
    assert {p for chunk in asked for p in chunk} == standing
    same(control)
    last = spoil(control, control.journal.version(control.stream) - 1)  # the 5th letter
    assert last.position == max(standing)  # in the last chunk
    asked.clear()
    assert control.parked_on()[1].row[0] == last.position  # seen: folded anew
    assert len(asked) == 4
    same(control)


def test_a_letter_or_its_decision_rewritten_after_it_was_read(control):
    letter_id = letter(control, 1)
    same(control)
    row = spoil(control, 1)
    same(control)  # no letter now, and the row that was it parks the run
    assert control.open_letter() is None and control.parked_on()[1] is not None
    mend(control, row)
    decide(control, letter_id)
    spoil(control, 2)
    same(control)
    assert isinstance(control.parked_on()[1], EventFormatError)


def test_a_stream_of_the_same_name_written_again_is_read_again(control):
    letter(control, 1)
    same(control)
    StoredEvent.objects.using(control.journal.using).filter(stream=control.stream).delete()
    control.append(StopRequested(run_id=control.run_id, by="ann", reason="look"))
    same(control)
    assert control.parked_on() == (None, None)


def test_requests_retries_and_discards(control):
    same(control)
    control.request_stop("ann", "a look")
    same(control)
    assert control.stop_request().by == "ann"
    control.request_resume("bob")
    same(control)
    assert control.stop_request() is None and control.resumed_by() == "bob"
    first = letter(control, 1)
    decide(control, first, retry=False)
    same(control)
    control.request_stop("cy", "again")
    decide(control, letter(control, 2))
    same(control)
    assert control.stop_request().by == "cy" and control.discarded() is None


def test_stalls_are_noted_once_each(control):
    assert control.note_stall(5.0) is not None
    assert control.note_stall(5.0) is None
    failed(control)
    assert control.note_stall(5.0) is None  # the last stall is still this one
    assert control.note_stall(9.0) is not None
    stalls = [e for e in control.events() if isinstance(e, RunStalled)]
    assert [s.since for s in stalls] == [5.0, 9.0]


def test_failures_since_the_run_last_moved(control):
    failed(control, message="one")
    first = letter(control, 1)
    decide(control, first)
    assert control.failing() is None  # retried since
    failed(control, message="two")
    failed(control, at=2, message="elsewhere")
    failing = control.failing()
    assert failing is not None and failing.tries == 2 and "elsewhere" in failing.last_error
    assert control.last_error(3) == "TimeoutError: two"
    assert control.last_error(2) == "TimeoutError: elsewhere"
    assert control.last_error(7) == ""
    run = control.run_id
    control.journal.append(streams.journal(run), [said_something(run, 9)], 3)
    assert control.failing() is None  # the run moved


# --- what a step reads --------------------------------------------------------------------------


def test_a_steps_reads_take_a_few_rows_of_a_long_stream(control, monkeypatch):
    """Against a stream of some 300 events, the step's questions (and the page's) turn a few
    rows into records each, where each read all 300."""
    for n in range(1, 61):
        failed(control)
        failed(control)
        failed(control)
        letter_id = letter(control, n)
        decide(control, letter_id, retry=n % 4 != 1)
    control.request_stop("ann", "a look")
    control.request_resume("bob")
    failed(control)
    assert control.journal.version(control.stream) > 300
    control.parked_on()  # this process's first look folds the stream once
    failed(control)

    read = counting_rows(monkeypatch)
    assert control.parked_on() == (None, None)
    assert control.retried_at() > 0
    assert control.stop_request() is None and control.resumed_by() == "bob"
    assert control.failing().tries == 2
    assert control.requests()[0].event.by == "bob"
    assert read[0] <= 16, f"{read[0]} rows read"
