"""A run's status says what its whole journal says: a verdict read beside the decisions people
took on it and the steps its sagas undid, and a clock that stops where the run stops."""

from __future__ import annotations

from runtime import folds, views
from runtime.events import (
    ConflictParked,
    ConflictResolved,
    DeadLetterDiscarded,
    DeadLettered,
    DeadLetterRetried,
    JournalImported,
    MessageSent,
    RunForked,
    RunInterrupted,
    RunResumed,
    RunStarted,
    SagaSettled,
    TeamFinished,
    TeamStarted,
)
from runtime.journal import Recorded

R = {"run_id": "r-1"}


def summary(*events, stream: str = "run-r-1") -> dict:
    started = TeamStarted(**R, team="desk", scenario="s", task="t", t=100.0)
    records = [Recorded(stream, i + 1, i + 1, e) for i, e in enumerate([started, *events])]
    return folds.run(views.Summary(), records)


def parked(conflict_id: str) -> ConflictParked:
    return ConflictParked(
        **R,
        conflict_id=conflict_id,
        subject="order-1",
        predicate="status",
        conflict_type="value",
        claims=[],
        t=110.0,
    )


ESCALATED = TeamFinished(**R, status="escalated", reason="c-1 waits for a person", t=120.0)


def test_an_escalated_run_waits_for_a_person_until_every_conflict_it_parked_is_decided():
    waiting = summary(parked("c-1"), parked("c-2"), ESCALATED)
    assert waiting["status"] == "waiting"
    one = ConflictResolved(**R, conflict_id="c-1", by="ann", reason="", choice="a", value="shipped")
    assert summary(parked("c-1"), parked("c-2"), ESCALATED, one)["status"] == "waiting"
    two = ConflictResolved(**R, conflict_id="c-2", by="bob", reason="", choice="none")
    resolved = summary(parked("c-1"), parked("c-2"), ESCALATED, one, two)
    assert resolved["status"] == "resolved"
    assert "waits for a person" not in resolved["reason"]
    assert resolved["reason"] == "conflict c-2 resolved by bob: no claim"


def test_a_run_a_person_discarded_reads_discarded_not_escalated():
    letter = DeadLettered(**R, letter_id="r-1:1", reason="stuck", t=110.0)
    gone = DeadLetterDiscarded(**R, letter_id="r-1:1", by="ann", reason="not worth it")
    assert summary(letter, gone, ESCALATED)["status"] == "discarded"
    assert summary(ESCALATED)["status"] == "escalated"  # nobody discarded anything


def test_a_done_run_whose_saga_was_undone_reads_compensated():
    undone = SagaSettled(
        **R,
        saga_id="refund-r-1",
        completed=["label", "credit"],
        compensated=["credit", "label"],
        failed_step="record",
        error="RuntimeError: down",
    )
    through = SagaSettled(**R, saga_id="refund-r-1", completed=["label", "credit", "record"])
    done = TeamFinished(**R, status="done", reason="answered", t=130.0)
    assert summary(undone, done)["status"] == "compensated"
    assert summary(through, done)["status"] == "done"


def test_the_clock_stops_at_a_dead_letter_and_an_interrupt_and_runs_again_when_the_run_goes_on():
    letter = DeadLettered(**R, letter_id="r-1:1", reason="stuck", t=150.0)
    assert summary(letter, stream="control-r-1")["finished"] == 150.0
    retried = DeadLetterRetried(**R, letter_id="r-1:1", by="ann", reason="")
    assert summary(letter, retried, stream="control-r-1")["finished"] is None
    stopped = RunInterrupted(**R, by="ann", t=160.0)
    assert summary(stopped)["finished"] == 160.0
    assert summary(stopped, RunResumed(**R, by="ann", t=170.0))["finished"] is None
    # and the wait is left out once it goes on
    assert summary(stopped, RunResumed(**R, by="ann", t=170.0))["waited"] == 10.0
    retried = DeadLetterRetried(**R, letter_id="r-1:1", by="ann", reason="", t=175.0)
    assert summary(letter, retried, stream="control-r-1")["waited"] == 25.0


def test_a_forks_clock_counts_none_of_its_parents_waits():
    """A fork copies its parent's interrupt and resume; its clock starts at its RunForked,
    where the parent's hour of waiting was taken off the fork's few minutes (-3,300 s)."""
    waited = [RunInterrupted(**R, by="ann", t=110.0), RunResumed(**R, by="ann", t=3_710.0)]
    forked = RunForked(**R, parent="r-0", at=4, number=4, by="bo", changes={}, t=5_000.0)
    done = TeamFinished(**R, status="done", reason="ok", t=5_300.0)
    state = summary(*waited, forked, done)
    assert (state["started"], state["waited"], state["finished"]) == (5_000.0, 0.0, 5_300.0)
    # Made at the parent's interrupt: it stands still from its making, not the parent's stop.
    stopped = summary(waited[0], forked, RunResumed(**R, by="bo", t=5_060.0), done)
    assert (stopped["waited"], stopped["finished"]) == (60.0, 5_300.0)


def test_an_imported_run_without_a_verdict_reads_imported_with_the_journals_own_times():
    run = [RunStarted(**R, task="t", t=50.0), RunStarted(**R, task="t", t=58.5)]
    records = [Recorded("run-r-1", i + 1, i + 1, e) for i, e in enumerate(run)]
    noted = JournalImported(**R, file="old.jsonl", by="ann", t=9_000.0)
    state = folds.run(views.Summary(), [*records, Recorded("import-r-1", 1, 3, noted)])
    assert state["status"] == "imported"
    assert (state["started"], state["finished"]) == (50.0, 58.5)  # not the import's time
    assert state["started_by"] == "ann" and state["events"] == 2


def test_a_run_waits_on_its_dead_letters_until_none_is_open_whichever_is_decided_first():
    # The harness's letter in the run's stream, the driver's in the control stream.
    started = TeamStarted(**R, team="repo-fix", scenario="s", task="t", t=100.0)
    ours = DeadLettered(**R, letter_id="r-1:1", reason="rejected twice", t=110.0)
    driver = DeadLettered(**R, letter_id="r-1:control:1", reason="step kept dying", t=120.0)
    retried = DeadLetterRetried(**R, letter_id="r-1:control:1", by="ann", reason="")
    last = DeadLetterRetried(**R, letter_id="r-1:1", by="ann", reason="")
    streams = ["run-r-1", "run-r-1", "control-r-1", "control-r-1", "run-r-1"]
    events = [started, ours, driver, retried, last]
    records = [
        Recorded(s, i + 1, i + 1, e) for i, (s, e) in enumerate(zip(streams, events, strict=True))
    ]
    both = folds.run(views.Summary(), records[:3])
    assert (both["status"], both["finished"]) == ("dead-lettered", 110.0)  # stopped at the first
    one = folds.run(views.Summary(), records[:4])
    assert (one["status"], one["reason"], one["finished"]) == (
        "dead-lettered",
        "rejected twice",
        110.0,
    )
    assert views.resume_point(records[:4])["waiting_for"] == [
        {"what": "dead letter", "id": "r-1:1"}
    ]
    none = folds.run(views.Summary(), records)
    assert (none["status"], none["reason"], none["finished"]) == ("running", "", None)


def test_a_summary_stored_before_it_kept_its_open_letters_goes_on_at_a_retry_as_it_did():
    letter = DeadLettered(**R, letter_id="r-1:1", reason="stuck", t=150.0)
    fold, rows = views.Summary(), folds.Rows()
    state = fold.start()
    folds.feed(fold, state, [Recorded("run-r-1", 1, 1, letter)], rows)
    assert state["status"] == "dead-lettered"
    del state["letters"]  # as a store kept it before
    retried = DeadLetterRetried(**R, letter_id="r-1:1", by="ann", reason="")
    folds.feed(fold, state, [Recorded("run-r-1", 2, 2, retried)], rows)
    assert state["status"] == "running" and state["letters"] == {}


def test_a_discarded_letter_sends_the_run_on_to_its_end_without_that_work():
    started = TeamStarted(**R, team="repo-fix", scenario="s", task="t", t=100.0)
    asked = MessageSent(**R, sender="orchestrator", recipient="coder", performative="request")
    done = MessageSent(**R, sender="coder", recipient="reviewer", performative="done")
    letter = DeadLettered(**R, letter_id="r-1:1", reason="rejected twice", t=110.0)
    gone = DeadLetterDiscarded(**R, letter_id="r-1:1", by="ann", reason="not worth it")
    events = [started, asked, done, letter, gone]
    records = [Recorded("run-r-1", i + 1, i + 1, e) for i, e in enumerate(events)]
    assert views.resume_point(records[:3])["stage"] == "review"
    assert views.resume_point(records[:4])["stage"] == "waiting"
    going = folds.run(views.Summary(), records)
    assert (going["status"], going["finished"]) == ("running", None)
    assert going["reason"] == "dead letter r-1:1 discarded by ann; the run goes on without it"
    assert views.resume_point(records)["stage"] == "finishing"  # not back to "review"
    ended = [*records, Recorded("run-r-1", 6, 6, ESCALATED)]
    assert folds.run(views.Summary(), ended)["status"] == "discarded"
    assert views.resume_point(ended)["stage"] == "complete"
