"""A sub-task the run gives up (its restarts ran out, its deadline passed) closes its
specialist's lease where the give-up was decided: a start still on the queue is refused the
lease, a start that took it just before the give-up keeps the sub-task alive, and a step that
resumes the run reads the starts the give-up was decided on, and no more."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from runtime.coordination.leases import Leases
from runtime.events import LeaseClosed, LeaseGranted, WorkerTimedOut
from runtime.fanout import engine, restarts
from runtime.fanout.engine import fan_out, worker_stream
from runtime.journal import StaleEpoch
from runtime.session import Session
from runtime.stops import Waiting
from tests.runtime.test_fanout_restarts import RUN, brief, record, sent_off

STREAM = worker_stream(RUN, "S2", "kb-worker")


def kept_failing(journal) -> None:
    now = time.time()
    record(journal, [(now - 30, ""), (now - 20, ""), (now - 10, "")])  # three starts, all failed


def test_a_start_after_the_give_up_on_restarts_is_refused_the_lease():
    handoff = brief()
    session, crew, sent, journal = sent_off(handoff)
    kept_failing(journal)

    [report] = fan_out(session, [("S2", handoff)], crew).values()

    assert report.status == "failed" and report.degraded.startswith("gave up after 3 starts")
    leases = Leases(journal)
    assert leases.acquire(STREAM, "late-worker", 30) is None  # a duplicate delivery, later
    assert leases.closed(STREAM) and sent == []
    [closed] = [r.event for r in journal.read(Leases.stream(STREAM))][-1:]
    assert isinstance(closed, LeaseClosed) and closed.reason == report.degraded

    # A step that resumes the run reads the same starts and gives it up the same way.
    resumed = Session(journal, RUN)
    [again] = fan_out(resumed, [("S2", handoff)], crew).values()
    assert again == report and not resumed.live


def test_a_start_that_took_the_lease_before_the_give_up_keeps_the_sub_task(monkeypatch):
    handoff = brief()
    session, crew, sent, journal = sent_off(handoff)
    kept_failing(journal)
    counted = restarts.tally

    def a_start_comes_in_between(lease, outages):
        # After the look read the lease, before it gives the sub-task up: a restart sent by
        # an earlier look, delivered again, takes the lease.
        Leases(journal).acquire(STREAM, "late-worker", 30)
        return counted(lease, outages)

    monkeypatch.setattr(restarts, "tally", a_start_comes_in_between)

    with pytest.raises(Waiting):
        fan_out(session, [("S2", handoff)], crew)

    assert not Leases(journal).closed(STREAM) and sent == []
    assert isinstance(journal.read(Leases.stream(STREAM))[-1].event, LeaseGranted)


def test_a_timed_out_specialist_is_fenced_out_and_a_late_start_refused():
    handoff = brief(deadline=0.001)
    session, crew, _sent, journal = sent_off(handoff)
    leases = Leases(journal)
    at_work = leases.acquire(STREAM, "slow-worker", 600)
    assert at_work is not None
    time.sleep(0.01)  # past the deadline counted from the hand-off

    [report] = fan_out(session, [("S2", handoff)], crew).values()

    assert report.reason == "budget"
    assert [e.task_id for e in session.emitted if isinstance(e, WorkerTimedOut)] == ["S2"]
    with pytest.raises(StaleEpoch):  # the specialist at work writes nothing more
        leases.renew(at_work, 600)
    assert leases.acquire(STREAM, "late-worker", 30) is None


def test_a_timeout_whose_lease_cannot_be_closed_is_recorded_and_said(monkeypatch, caplog):
    """Three closes in a row that lose to the specialist's writes: the timeout stands, and the
    lease left open (a late start not refused) is in the log, where it went unsaid."""
    handoff = brief(deadline=0.001)
    session, crew, _sent, _journal = sent_off(handoff)
    time.sleep(0.01)
    monkeypatch.setattr(Leases, "close", lambda self, *args, **kwargs: False)

    [report] = fan_out(session, [("S2", handoff)], crew).values()

    assert report.reason == "budget"
    assert f"{STREAM}: the lease of timed-out S2 could not be closed" in caplog.text


def test_a_step_that_resumes_the_run_after_the_deadline_decides_what_the_live_look_did(
    monkeypatch,
):
    handoff = brief(deadline=60)
    session, crew, _sent, journal = sent_off(handoff)
    kept_failing(journal)
    [report] = fan_out(session, [("S2", handoff)], crew).values()  # given up on its restarts
    later = time.time() + 3600  # the step that resumes the run comes an hour later
    monkeypatch.setattr(engine, "time", SimpleNamespace(time=lambda: later))

    resumed = Session(journal, RUN)
    [again] = fan_out(resumed, [("S2", handoff)], crew).values()

    assert again == report  # not timed out by the clock of an hour later
    assert not [e for e in resumed.emitted if isinstance(e, WorkerTimedOut)]
