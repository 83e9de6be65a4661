"""How soon a run's step that waits on specialists elsewhere looks again. Each look takes and
gives back the run's lease (two events), so it used to look every half second however long a
specialist worked: 2,400 lease events for a ten-minute specialist. Now it looks a tenth of the
time the specialist has been out (from half a second to at most five), and no sooner than a
specialist waiting out its model endpoint is due to start again."""

from __future__ import annotations

import time
from dataclasses import replace
from types import SimpleNamespace

import pytest

from runtime.coordination.leases import Leases
from runtime.events import AgentFinished, LeaseGranted, ModelCalled
from runtime.fanout import engine
from runtime.fanout.contracts import Report
from runtime.fanout.engine import LONGEST_LOOK, WAIT_SECONDS, fan_out, worker_stream
from runtime.fanout.restarts import tally
from runtime.stops import Waiting
from tests.runtime.test_fanout_restarts import DOWN, OUTAGES, RUN, brief, lease, record, sent_off


def at(monkeypatch, t: float) -> None:
    """The engine's clock reads `t` (the hand-off was at the real time)."""
    monkeypatch.setattr(engine, "time", SimpleNamespace(time=lambda: t))


def look(session, crew, handoff) -> float:
    with pytest.raises(Waiting) as waited:
        fan_out(session, [("S2", handoff)], crew)
    return waited.value.seconds


def at_work(journal) -> None:
    """S2 took its lease and holds it: at work."""
    stream = worker_stream(RUN, "S2", "kb-worker")
    granted = LeaseGranted(run_id=RUN, resource=stream, holder="w", expires=time.time() + 600)
    journal.append(Leases.stream(stream), [granted], 0)


def test_a_specialist_just_sent_off_is_looked_at_again_in_half_a_second(monkeypatch):
    handoff = brief()
    session, crew, _sent, _journal = sent_off(handoff)
    at(monkeypatch, time.time())

    assert look(session, crew, handoff) == WAIT_SECONDS


@pytest.mark.parametrize(("out", "expected"), [(3, WAIT_SECONDS), (30, 3.0), (600, LONGEST_LOOK)])
def test_a_specialist_at_work_is_looked_at_a_tenth_of_its_time_out_within_bounds(
    monkeypatch, out, expected
):
    handoff = brief()
    session, crew, _sent, journal = sent_off(handoff)
    at_work(journal)
    at(monkeypatch, time.time() + out)

    assert look(session, crew, handoff) == pytest.approx(expected, abs=0.05)


def test_a_specialist_waiting_out_its_endpoint_is_looked_at_when_its_start_is_due(monkeypatch):
    handoff = brief()
    session, crew, sent, journal = sent_off(handoff)
    now = time.time()
    ends = [(now - 3, DOWN)]  # its first outage start: the next is due 1 to 2 s after it
    record(journal, ends)
    due = tally(lease(ends, worker_stream(RUN, "S2", "kb-worker")), OUTAGES).again_at
    at(monkeypatch, now - 2.5)  # half a second after that start ended: not due yet

    seconds = look(session, crew, handoff)

    assert sent == []
    assert seconds == pytest.approx(due - (now - 2.5))
    assert WAIT_SECONDS <= seconds <= LONGEST_LOOK


def test_a_look_reads_the_last_event_of_a_specialists_stream_not_all_it_wrote(monkeypatch):
    handoff = brief()
    session, crew, _sent, journal = sent_off(handoff)
    at_work(journal)
    stream = worker_stream(RUN, "S2", "kb-worker")
    journal.append(stream, [ModelCalled(run_id=RUN, agent="kb-worker") for _ in range(500)], 0)
    read = []
    plain = journal.read
    monkeypatch.setattr(
        journal,
        "read",
        lambda s, after=0: read.append((s, len(plain(s, after)))) or plain(s, after),
    )

    look(session, crew, handoff)

    assert (stream, 1) in read and all(n <= 1 for s, n in read if s == stream)


def test_a_look_reads_the_hand_off_time_only_of_a_specialist_not_finished(monkeypatch):
    # The hand-off time is a scan of the run's record (read back, on a flight that let go of
    # it): a specialist whose stream holds its whole run has no deadline left to judge.
    handoff = brief()
    session, crew, _sent, journal = sent_off(handoff)
    stream = worker_stream(RUN, "S2", "kb-worker")
    journal.append(stream, [AgentFinished(run_id=RUN, agent="kb-worker")], 0)
    done = Report(worker_id="kb-worker", status="ok")
    asked = []
    handed_at = engine.handed_at
    monkeypatch.setattr(engine, "handed_at", lambda s, sub: asked.append(sub) or handed_at(s, sub))

    assert fan_out(session, [("S2", handoff)], replace(crew, run=lambda *_: done)) == {"S2": done}
    assert asked == []
