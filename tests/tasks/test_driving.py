"""Driving runs step by step in this process (no broker): leases, fencing, interrupts and the
decisions people take on dead letters."""

from __future__ import annotations

import contextlib
import threading

import pytest
from django.db import connections

from journal_store import projection
from journal_store.journal import DjangoJournal, Fenced
from journal_store.models import DeadLetter, RunSummary
from runtime import flight
from runtime.events import BudgetDebited
from runtime.journal import StaleEpoch
from services import letters, runs, steps
from services.control import Control

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.usefixtures("nowhere"),  # tests/conftest.py: the test drives each step
]


def drive(run_id, limit=200):
    outcomes = []
    for _ in range(limit):
        outcome = steps.drive_step(run_id, "test")
        outcomes.append(outcome)
        if outcome != "stepped":
            return outcomes
    raise AssertionError("never settled")


def kinds(run_id):
    return [r.event.kind for r in DjangoJournal().read(f"run-{run_id}")]


def test_a_started_run_is_driven_to_its_verdict_one_step_at_a_time():
    run_id = runs.start_run("repo-fix", "first-flight")
    outcomes = drive(run_id)
    assert (
        outcomes[-1] == "done"
        and outcomes.count("stepped") == kinds(run_id).count("ModelCalled") - 1
    )
    assert steps.drive_step(run_id) == "done"  # a late delivery does nothing


def test_with_the_shipped_step_size_one_step_drives_a_short_run_to_its_verdict(settings):
    settings.STEP_TURNS = 100  # the default; the suite's settings drive one turn per step
    run_id = runs.start_run("repo-fix", "first-flight")
    assert steps.drive_step(run_id) == "done"
    assert kinds(run_id).count("ModelCalled") > 1  # many turns, one warm session
    assert flight.replay(DjangoJournal(), run_id).identical


def test_interrupt_stops_at_the_next_boundary_and_resume_goes_on():
    run_id = runs.start_run("repo-fix", "first-flight")
    assert steps.drive_step(run_id) == "stepped"
    runs.interrupt(run_id, "ann", "wrong repository")
    assert steps.drive_step(run_id) == "interrupted"
    assert steps.drive_step(run_id) == "interrupted"  # stays stopped: no writes
    assert kinds(run_id)[-1] == "RunInterrupted"
    runs.resume(run_id, "bob", "it was the right one")
    assert drive(run_id)[-1] == "done"
    events = [r.event for r in DjangoJournal().read(f"run-{run_id}")]
    stopped = next(e for e in events if e.kind == "RunInterrupted")
    resumed = next(e for e in events if e.kind == "RunResumed")
    assert (stopped.by, stopped.reason, resumed.by) == ("ann", "wrong repository", "bob")
    projection.catch_up()
    with pytest.raises(runs.RunError, match="already finished"):
        runs.interrupt(run_id, "ann")


def test_a_dead_lettered_escalation_can_be_retried_and_then_discarded():
    run_id = runs.start_run("repo-fix", "silent-dropout")
    assert drive(run_id)[-1] == "dead-lettered"
    assert runs.status_of(run_id) == "dead-lettered"
    projection.catch_up()
    letter = DeadLetter.objects.get(run_id=run_id)
    assert letter.status == "open" and "reviewer did not reply" in letter.reason
    letters.decide_letter(letter.letter_id, "retry", "ann", "the reviewer is back")
    assert drive(run_id)[-1] == "dead-lettered"  # still silent: a second letter
    projection.catch_up()
    second = DeadLetter.objects.filter(run_id=run_id, status="open").get()
    assert DeadLetter.objects.get(letter_id=letter.letter_id).status == "retried"
    letters.decide_letter(second.letter_id, "discard", "ann", "nobody will review this")
    assert drive(run_id)[-1] == "escalated"
    with pytest.raises(letters.LetterAlreadyDecided):
        letters.decide_letter(second.letter_id, "retry", "bob", "too late")


def test_two_deciders_at_once_record_exactly_one_decision():
    run_id = runs.start_run("repo-fix", "silent-dropout")
    drive(run_id)
    letter_id = f"{run_id}:1"
    barrier, results = threading.Barrier(2), []

    def decide(who: str) -> None:
        barrier.wait()
        try:
            letters.decide_letter(letter_id, "discard", who, "no")
            results.append("decided")
        except letters.LetterAlreadyDecided:
            results.append("already")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=decide, args=(w,)) for w in ("ann", "bob")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(results) == ["already", "decided"]
    assert kinds(run_id).count("DeadLetterDiscarded") == 1


def test_two_drivers_at_once_one_drives_and_the_other_writes_nothing():
    run_id = runs.start_run("repo-fix", "first-flight")
    barrier, outcomes = threading.Barrier(2), []

    def step() -> None:
        barrier.wait()
        try:
            outcomes.append(steps.drive_step(run_id, threading.current_thread().name))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=step) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(outcomes) in (["busy", "stepped"], ["lost", "stepped"])
    assert kinds(run_id).count("ModelCalled") == 1


def test_a_driver_whose_lease_was_taken_over_cannot_write(settings):
    run_id = runs.start_run("repo-fix", "first-flight")
    control = Control(run_id)
    old = control.acquire("old", ttl=-1, at_version=1)  # already expired
    new = control.acquire("new", ttl=60, at_version=1)
    assert old is not None and new is not None and new.epoch == old.epoch + 1
    journal = DjangoJournal()
    stale = Fenced(journal, old.stream, old.epoch)
    with pytest.raises(StaleEpoch):
        stale.append(f"run-{run_id}", [BudgetDebited(run_id=run_id, amount=1)], 1)
    Fenced(journal, new.stream, new.epoch).append(
        f"run-{run_id}", [BudgetDebited(run_id=run_id, amount=1)], 1
    )
    assert journal.version(f"run-{run_id}") == 2


def test_a_step_that_keeps_raising_is_dead_lettered_with_its_last_error(monkeypatch, settings):
    from runtime import flight

    run_id = runs.start_run("repo-fix", "first-flight")

    def broken(*args, **kwargs):
        raise RuntimeError("the harness hit a bug")

    monkeypatch.setattr(flight, "drive", broken)
    for _ in range(settings.MAX_STEP_ATTEMPTS):
        # Recorded and tried again after a backoff by the step itself, not by Celery.
        assert steps.drive_step(run_id) == "failed-step"
    assert steps.drive_step(run_id) == "dead-lettered"
    assert runs.status_of(run_id) == "dead-lettered"
    letter = Control(run_id).open_letter()
    assert letter.last_error == "RuntimeError: the harness hit a bug"
    assert letter.attempts == settings.MAX_STEP_ATTEMPTS
    monkeypatch.undo()
    letters.decide_letter(letter.letter_id, "retry", "ann", "fixed the bug")
    assert drive(run_id)[-1] == "done"  # retried from the journal, to the end


def test_a_run_parked_on_its_task_letter_is_not_dead_lettered_again_when_its_step_comes_again(
    settings,
):
    """A step of a run the harness parked (its letter undecided), delivered again (a task
    redelivered, a duplicate), stops at the letter without taking the lease: its starts were
    counted as a dying step's, and after MAX_STEP_ATTEMPTS the driver dead-lettered the run a
    second time, "started 3 times and never finished (its worker died)", though nothing died."""
    run_id = runs.start_run("repo-fix", "reject-loop")
    assert drive(run_id)[-1] == "dead-lettered"  # the reviewer kept rejecting: parked
    leases = DjangoJournal().version(f"lease-{run_id}")
    for _ in range(settings.MAX_STEP_ATTEMPTS + 2):
        assert steps.drive_step(run_id, "test") == "dead-lettered"
    assert Control(run_id).open_letter() is None
    assert DjangoJournal().version(f"lease-{run_id}") == leases
    projection.catch_up()
    assert list(DeadLetter.objects.filter(run_id=run_id).values_list("letter_id", "status")) == [
        (f"{run_id}:1", "open")
    ]
    letters.decide_letter(f"{run_id}:1", "retry", "ann", "one more round")
    steps.drive_step(run_id, "test")  # a decision lets it go on: a step takes the lease
    assert DjangoJournal().version(f"lease-{run_id}") > leases


def test_a_fan_out_run_waits_between_steps_and_times_out_a_specialist_that_never_came(
    monkeypatch,
):
    """Specialists sent elsewhere: the run's step ends "waiting" until their streams hold whole
    runs. One never runs (its message was lost): its deadline passes, recovery retries it.
    The deadline is passed by moving the engine's clock on, not by sleeping: with a deadline
    short enough to sleep out, a step slowed by a busy machine timed out a specialist early."""
    import time
    import types

    from runtime.events import WorkerTimedOut
    from runtime.fanout import engine
    from services import specialists

    sent: list[tuple[str, str, dict]] = []
    monkeypatch.setattr(
        specialists, "dispatch", lambda run, sub, handoff: sent.append((run, sub, handoff))
    )
    run_id = runs.start_run("support-triage", "broken-policy", deadline=600)
    assert drive(run_id)[-1] == "waiting"
    assert [sub for _, sub, _ in sent] == ["S1", "S2", "S3"]
    assert drive(run_id)[-1] == "waiting"  # nobody has done anything yet: still waiting
    for run, sub, _handoff in sent:
        if sub != "S2":  # S2's message is lost
            assert specialists.run_specialist(run, sub, "test-worker") in ("ok", "failed")
    later = types.SimpleNamespace(time=lambda: time.time() + 601)
    monkeypatch.setattr(engine, "time", later)  # S2's deadline passes
    assert drive(run_id)[-1] == "waiting"  # S2 timed out; its retry S2r was sent off
    assert sent[-1][1] == "S2r"
    specialists.run_specialist(*sent[-1][:2], "test-worker")
    assert drive(run_id)[-1] == "done"
    events = [r.event for r in DjangoJournal().read(f"run-{run_id}")]
    [timed_out] = [e for e in events if isinstance(e, WorkerTimedOut)]
    assert timed_out.task_id == "S2" and timed_out.elapsed >= 600
    assert Control(run_id).open_letter() is None  # waiting is not a step that keeps dying


def test_an_escalated_specialist_waits_in_the_dead_letter_queue_for_a_person(monkeypatch):
    """On the workers an escalation parks the run: a person discards the sub-task, and the
    answer goes on without it, saying so."""
    from runtime.events import AnswerComposed, TaskEscalated
    from services import specialists

    sent: list[tuple[str, str, dict]] = []
    monkeypatch.setattr(
        specialists, "dispatch", lambda run, sub, handoff: sent.append((run, sub, handoff))
    )
    run_id = runs.start_run("support-triage", "runaway-spend")
    assert drive(run_id)[-1] == "waiting"
    for run, sub, _handoff in sent:  # one after another: the spender trips the breaker alone
        specialists.run_specialist(run, sub, "test-worker")
        # Each seeds its breaker with the run's spending so far, read off its summary: the sum
        # of every debit in the run's streams and its specialists'.
        debits = [
            r.event.amount
            for r in flight.run_records(DjangoJournal(), run_id)
            if isinstance(r.event, BudgetDebited)
        ]
        assert specialists.spent_so_far(run_id) == sum(debits) > 0
    assert drive(run_id)[-1] == "dead-lettered"
    projection.catch_up()
    [letter] = DeadLetter.objects.filter(run_id=run_id, status="open")
    assert letter.task_id == "S2" and "kb-worker escalated" in letter.reason
    letters.decide_letter(letter.letter_id, "discard", "ann", "no knowledge base needed here")
    # Driven on without the sub-task: running (a step is on its way), finishing, not waiting.
    row = RunSummary.objects.get(run_id=run_id)
    assert (row.status, row.stage, row.waiting_for) == ("running", "finishing", "")
    assert drive(run_id)[-1] == "done"
    projection.catch_up()
    row = RunSummary.objects.get(run_id=run_id)
    assert (row.status, row.stage) == ("done", "complete")
    events = [r.event for r in DjangoJournal().read(f"run-{run_id}")]
    assert [e.task_id for e in events if isinstance(e, TaskEscalated)] == ["S2"]
    [answer] = [e for e in events if isinstance(e, AnswerComposed)]
    assert "a person discarded the sub-task" in answer.degraded


def past_waiting(run_id, sent, start) -> str:
    """Drive the fan-out run, starting each specialist it sends off (`start(run, sub)`), until
    it stops waiting for them: its outcome."""
    outcome = drive(run_id)[-1]
    for _ in range(10):
        if outcome != "waiting":
            break
        while sent:
            run, sub, _handoff = sent.pop(0)
            start(run, sub)
        outcome = drive(run_id)[-1]
    return outcome


def test_a_specialist_that_keeps_failing_is_given_up_after_its_restarts(monkeypatch, settings):
    """S2 fails at every start: started three times in all (two restarts), then the sub-task
    fails and is escalated to the dead-letter queue."""
    from runtime.fanout.restarts import MAX_RESTARTS
    from runtime.faults import InjectedFailure
    from services import specialists

    sent: list[tuple[str, str, dict]] = []
    monkeypatch.setattr(
        specialists, "dispatch", lambda run, sub, handoff: sent.append((run, sub, handoff))
    )
    settings.FAULT = "fail:S2#1,fail:S2#2,fail:S2#3,fail:S2#4"
    run_id = runs.start_run("support-triage", "broken-policy")

    def start(run: str, sub: str) -> None:
        # A failure lets the lease go with the work undone, as a crashed task leaves it.
        with contextlib.suppress(InjectedFailure):
            specialists.run_specialist(run, sub, "test-worker")

    assert past_waiting(run_id, sent, start) == "dead-lettered"
    grants = [
        r
        for r in DjangoJournal().read_prefix(f"lease-worker-{run_id}-S2-")
        if r.event.kind == "LeaseGranted"
    ]
    assert len(grants) == 1 + MAX_RESTARTS
    projection.catch_up()
    [letter] = DeadLetter.objects.filter(run_id=run_id, status="open")
    assert letter.task_id == "S2" and "kb-worker escalated" in letter.reason
    assert f"gave up after {1 + MAX_RESTARTS} starts" in letter.last_error


def test_a_failed_step_backs_off_with_jitter_up_to_a_minute():
    first = [steps.backoff(1) for _ in range(50)]
    assert all(1.0 <= s <= 2.0 for s in first) and len(set(first)) > 1  # jittered
    assert all(steps.backoff(10) <= 60.0 for _ in range(20))
    assert steps.TRANSIENT and RuntimeError not in steps.TRANSIENT  # Celery retries only these


def test_a_failed_steps_wait_is_never_taken_for_a_stall(settings):
    # The reconciler takes a run whose lease was given back more than STALL_SECONDS ago for one
    # nobody drives (and notes a stall): a step waiting out its backoff must come back sooner.
    for grace in (60, 20):
        settings.STALL_SECONDS = grace
        assert max(steps.backoff(10) for _ in range(50)) <= 0.75 * grace
        assert steps.longest_wait() <= 0.75 * grace


def test_a_specialist_is_sent_ids_only_and_reads_its_brief_from_the_journal():
    """The message on the broker names the task and carries two ids: the hand-off is
    journalled, not re-sent, and the sender never imports the task's module."""
    from config.celery import app
    from services import specialists

    with app.connection_for_read() as connection:
        queue = connection.SimpleQueue("celery")
        with contextlib.suppress(queue.Empty):
            while True:  # what earlier tests left on the in-memory broker
                queue.get_nowait().ack()
        specialists.dispatch("r-0123456789ab", "S1", {"brief": "x" * 10_000})
        message = queue.get(timeout=5)
        message.ack()
        queue.close()
    assert message.headers["task"] == "tasks.fanout.specialist"
    assert message.decode()[0] == ["r-0123456789ab", "S1"]
    assert specialists.run_specialist("r-0123456789ab", "S1", "test-worker") == "missing"


def test_where_a_run_stands_is_its_journals_fold_at_every_step():
    # runs.status_of reads the summary row after a catch-up; it must say what folding the
    # whole journal says, including of events no catch-up has seen yet.
    from runtime import views

    def folded(run_id):
        return views.status(DjangoJournal().read_run(run_id))

    run_id = runs.start_run("repo-fix", "first-flight")
    seen = []
    for step in range(200):
        assert runs.status_of(run_id) == folded(run_id)
        seen.append(runs.status_of(run_id))
        if step == 1:
            runs.interrupt(run_id, "ann")
            assert steps.drive_step(run_id, "test") == "interrupted"
            assert runs.status_of(run_id) == folded(run_id) == "interrupted"
            runs.resume(run_id, "ann")
        if steps.drive_step(run_id, "test") != "stepped":
            break
    assert runs.status_of(run_id) == folded(run_id) == "done"
    assert "running" in seen

    other = runs.start_run("repo-fix", "first-flight")
    Control(other).dead_letter("a person must look", 1, "")  # written, not caught up
    assert runs.status_of(other) == folded(other) == "dead-lettered"
    with pytest.raises(runs.RunNotFound):
        runs.status_of("r-nobody")


def test_a_specialist_whose_model_endpoint_is_down_is_given_up_saying_so(monkeypatch, settings):
    """S2's model endpoint does not answer at any start, and outages are not waited out: the
    sub-task is given up after its restarts as any failing specialist is, and the letter says
    since when the endpoint has not answered, where it said only that the specialist kept
    failing. (tests/tasks/test_a_specialists_outage_is_waited_out.py: with the window.)"""
    from runtime.fanout.restarts import MAX_RESTARTS
    from runtime.model import EndpointDown
    from services import specialists

    sent: list[tuple[str, str, dict]] = []
    monkeypatch.setattr(
        specialists, "dispatch", lambda run, sub, handoff: sent.append((run, sub, handoff))
    )
    real_work = specialists.work

    def down_for_s2(session, sub_id, *args):
        if sub_id == "S2":
            raise EndpointDown("gave up on POST http://vendor.invalid/v1/chat/completions: 503")
        return real_work(session, sub_id, *args)

    monkeypatch.setattr(specialists, "work", down_for_s2)
    settings.OUTAGE_SECONDS = 0
    run_id = runs.start_run("support-triage", "broken-policy")

    def start(run: str, sub: str) -> None:
        done = specialists.run_specialist(run, sub, "test-worker")
        assert done in ("ok", "failed", "endpoint down")

    assert past_waiting(run_id, sent, start) == "dead-lettered"
    projection.catch_up()
    [letter] = DeadLetter.objects.filter(run_id=run_id, status="open")
    assert letter.task_id == "S2"
    assert (
        f"gave up after {1 + MAX_RESTARTS} starts: its model endpoint has not answered since "
        in letter.last_error
    )
    assert "UTC (the last time: EndpointDown: gave up on POST http://vendor.invalid" in (
        letter.last_error
    )
    assert flight.replay(DjangoJournal(), run_id).identical
