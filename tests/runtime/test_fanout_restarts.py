"""A specialist whose model endpoint is down is waited out, as the run's own step is: its
failed starts do not count toward its restarts while the outage is within the host's window,
and it is started again after a wait, not at once. Past the window its starts count, and the
sub-task is given up saying since when the endpoint has not answered. All of it is read from
the lease's journalled events and their times."""

from __future__ import annotations

import time

import pytest

from runtime.coordination.leases import Leases
from runtime.events import LeaseGranted, LeaseReleased, WorkerTimedOut
from runtime.fanout.contracts import Handoff
from runtime.fanout.engine import Crew, fan_out, hand_off, worker_stream
from runtime.fanout.restarts import MAX_RESTARTS, Outages, clock, tally
from runtime.journal import MemoryJournal
from runtime.session import Session
from runtime.stops import Waiting

RUN = "r-0123456789ab"
DOWN = "EndpointDown: gave up on POST http://vendor.invalid/v1/chat/completions: HTTP 503"
OUTAGES = Outages(window=900.0, longest=45.0)


def brief(deadline: float = 3600.0) -> Handoff:
    return Handoff(
        worker_id="kb-worker",
        objective="Find the help articles that apply to this ticket.",
        inputs={"ticket": "a cracked lamp"},
        allowed_tools=["kb.search"],
        max_steps=4,
        max_tokens=2000,
        return_contract="findings that each cite the tool call they rest on",
        deadline_seconds=deadline,
    )


def lease(ends: list[tuple[float, str]], resource: str = "worker-r-1-S2-kb-worker") -> list:
    """A specialist's lease: one start a second before each (time, outcome) that ends it."""
    events: list = []
    for n, (t, outcome) in enumerate(ends, 1):
        granted = LeaseGranted(run_id=RUN, resource=resource, holder="w", expires=t + 30, t=t - 1)
        events.append(granted)
        if outcome is not None:
            released = LeaseReleased(
                run_id=RUN, resource=resource, holder="w", epoch=n, outcome=outcome, t=t
            )
            events.append(released)
    return events


def test_starts_that_met_the_endpoint_down_within_the_window_do_not_count():
    t0 = 1_000_000.0
    starts = tally(lease([(t0, DOWN), (t0 + 10, DOWN), (t0 + 30, DOWN), (t0 + 70, DOWN)]), OUTAGES)

    assert (starts.starts, starts.waited, starts.counted) == (4, 4, 0)
    assert not starts.given_up and starts.outage == t0
    # The fourth waited start waits 16 s, of which up to half is jitter; at most `longest`.
    assert t0 + 70 + 8 <= starts.again_at <= t0 + 70 + 16
    # The same lease read again (the next look) waits the same: the jitter is seeded.
    again = tally(lease([(t0, DOWN), (t0 + 10, DOWN), (t0 + 30, DOWN), (t0 + 70, DOWN)]), OUTAGES)
    assert again.again_at == starts.again_at
    waits = [
        tally(lease([(t0 + 60 * n, DOWN) for n in range(k)]), OUTAGES).again_at - t0 - 60 * (k - 1)
        for k in range(1, 12)
    ]
    assert max(waits) <= OUTAGES.longest


def test_a_start_comes_no_sooner_than_the_endpoint_asked_within_the_longest_wait():
    t0 = 1_000_000.0
    first = lease([(t0, DOWN)])
    assert t0 + 1 <= tally(first, OUTAGES).again_at <= t0 + 2  # doubling alone: 2 s at most
    for asked, waits in [(30.0, 30.0), (600.0, OUTAGES.longest), (0.5, None)]:
        said = [first[0], first[1].model_copy(update={"retry_after": asked})]
        again_at = tally(said, OUTAGES).again_at
        if waits is None:  # asked for less than doubling waits: doubling's wait
            assert again_at == tally(first, OUTAGES).again_at
        else:
            assert again_at == t0 + waits
    # Journalled with the release, so every look reads the same wait.
    released = LeaseReleased(run_id=RUN, resource="r", holder="w", retry_after=30.0)
    assert LeaseReleased.model_validate(released.model_dump()).retry_after == 30.0
    for bad in (-1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError):
            LeaseReleased(run_id=RUN, resource="r", holder="w", retry_after=bad)


def test_past_the_window_the_starts_count_and_the_sub_task_is_given_up_saying_since_when():
    t0 = 1_000_000.0
    ends = [(t0, DOWN), (t0 + 900, DOWN), (t0 + 901, DOWN)]
    assert not tally(lease(ends), OUTAGES).given_up  # one waited, two counted
    starts = tally(lease([*ends, (t0 + 902, DOWN)]), OUTAGES)

    assert (starts.starts, starts.waited, starts.counted) == (4, 1, 1 + MAX_RESTARTS)
    assert starts.given_up and starts.again_at == 0.0  # counted: started again at once, before
    assert starts.why() == (
        f"gave up after 4 starts: its model endpoint has not answered since {clock(t0)} "
        f"(1 of them waited out its model endpoint; the last time: {DOWN})"
    )


def test_with_no_window_an_outage_counts_as_any_failed_start():
    t0 = 1_000_000.0
    starts = tally(lease([(t0, DOWN), (t0 + 1, DOWN), (t0 + 2, DOWN)]), Outages())

    assert starts.given_up and starts.waited == 0
    assert starts.why() == (
        f"gave up after 3 starts: its model endpoint has not answered since {clock(t0)} "
        f"(the last time: {DOWN})"
    )


def test_a_start_that_failed_otherwise_counts_and_ends_the_outage():
    t0 = 1_000_000.0
    # A start that raised (its release says nothing), and one whose worker died (no release):
    # each counts, and the outage after them is a new one, waited out from its own start.
    ends = [(t0, DOWN), (t0 + 10, ""), (t0 + 20, DOWN), (t0 + 30, None), (t0 + 2000, DOWN)]
    starts = tally(lease(ends), OUTAGES)

    assert (starts.starts, starts.waited, starts.counted) == (5, 3, 2)
    assert not starts.given_up and starts.outage == t0 + 2000
    kept_failing = tally(lease([(t0, DOWN), (t0 + 10, ""), (t0 + 20, ""), (t0 + 30, "")]), OUTAGES)
    assert kept_failing.given_up and kept_failing.outage is None
    assert kept_failing.why() == (
        "gave up after 4 starts: the specialist kept failing "
        "(1 of them waited out its model endpoint)"
    )


# --- the engine, looking at a specialist sent to another worker --------------------------------


class Sent(list):
    def __call__(self, run_id: str, sub_id: str, handoff: dict) -> None:
        self.append(sub_id)


def nothing_finished(*_args: object) -> None:
    pytest.fail("no specialist's stream here holds a whole run")


def sent_off(handoff: Handoff) -> tuple[Session, Crew, Sent, MemoryJournal]:
    """A live run that handed S2's brief over and sent it off to another worker."""
    journal = MemoryJournal()
    session = Session(journal, RUN)
    sent = Sent()
    crew = Crew(run=nothing_finished, cap=3, dispatch=sent, outages=OUTAGES)
    hand_off(session, "S2", handoff, crew)
    assert sent == ["S2"]
    sent.clear()
    return session, crew, sent, journal


def record(journal: MemoryJournal, ends: list[tuple[float, str]]) -> None:
    """S2's starts, each ended as said, in its lease's stream."""
    stream = worker_stream(RUN, "S2", "kb-worker")
    journal.append(Leases.stream(stream), lease(ends, resource=stream), 0)


def test_the_engine_waits_before_starting_a_specialist_whose_endpoint_is_down_again():
    handoff = brief()
    session, crew, sent, journal = sent_off(handoff)
    now = time.time()
    # Three starts that met the endpoint down, the last just now: past the cap of counted
    # starts, but within the outage window, so not given up; and not started again yet.
    record(journal, [(now - 50, DOWN), (now - 30, DOWN), (now - 0.5, DOWN)])

    with pytest.raises(Waiting):
        fan_out(session, [("S2", handoff)], crew)
    assert sent == []

    # Its wait is over (the third start ended a minute ago): started again.
    session, crew, sent, journal = sent_off(handoff)
    record(journal, [(now - 120, DOWN), (now - 90, DOWN), (now - 60, DOWN)])
    with pytest.raises(Waiting):
        fan_out(session, [("S2", handoff)], crew)
    assert sent == ["S2"]


def test_the_engine_gives_up_a_sub_task_whose_outage_outlasted_the_window():
    handoff = brief()
    session, crew, sent, journal = sent_off(handoff)
    now = time.time()
    record(journal, [(now - 1000, DOWN), (now - 60, DOWN), (now - 40, DOWN), (now - 20, DOWN)])

    [report] = fan_out(session, [("S2", handoff)], crew).values()

    assert report.status == "failed" and report.reason == "tool_error"
    assert report.degraded == (
        f"gave up after 4 starts: its model endpoint has not answered since {clock(now - 1000)} "
        f"(1 of them waited out its model endpoint; the last time: {DOWN})"
    )
    assert sent == []


def test_the_sub_tasks_deadline_wins_over_an_outage_being_waited_out():
    handoff = brief(deadline=0.001)
    session, crew, sent, journal = sent_off(handoff)
    now = time.time()
    record(journal, [(now - 0.5, DOWN)])
    time.sleep(0.01)  # past the deadline counted from the hand-off

    [report] = fan_out(session, [("S2", handoff)], crew).values()

    assert report.status == "failed" and report.reason == "budget"
    assert [e.task_id for e in session.emitted if isinstance(e, WorkerTimedOut)] == ["S2"]
    assert sent == []
