"""Tool retries back off with jitter; the delay is journalled, and a replay reads it back
instead of drawing (or sleeping) again."""

from __future__ import annotations

import random

from runtime import loop
from runtime.backoff import Backoff
from runtime.budget import Budget
from runtime.journal import MemoryJournal
from runtime.model import ScriptedClient, call
from runtime.session import Session
from runtime.tools import Tool, Toolbox, schema
from tests.runtime.test_loop import Flaky


def agent(tool, backoff, retries=2):
    return loop.Agent(
        "coder",
        ScriptedClient([call("run_tests", 70), call("done", 40)], "coder"),
        Toolbox([Tool("run_tests", "Tests.", schema({}), tool)]),
        "sys",
        retries=retries,
        backoff=backoff,
    )


def test_each_retry_waits_longer_with_jitter_never_at_once_and_never_past_the_cap():
    backoff = Backoff(base=1.0, factor=2.0, cap=5.0, rng=random.Random(7))
    delays = [backoff.delay(n) for n in (1, 2, 3, 4, 5)]
    steps = [1.0, 2.0, 4.0, 5.0, 5.0]
    assert all(step / 2 <= d <= step for d, step in zip(delays, steps, strict=True))
    again = Backoff(base=1.0, factor=2.0, cap=5.0, rng=random.Random(8))
    assert [again.delay(n) for n in (1, 2, 3, 4, 5)] != delays  # jitter: not in lockstep


def test_the_delays_are_journalled_slept_live_and_read_back_on_replay():
    slept: list[float] = []
    live = Backoff(base=0.5, rng=random.Random(1), sleep=slept.append)
    journal = MemoryJournal()
    flaky = Flaky(failures=2)
    loop.run(agent(flaky, live), "task", Session(journal, "r-1"), Budget(10_000), task_id="T1")
    events = [r.event for r in journal.read("run-r-1")]
    scheduled = [e for e in events if e.kind == "ToolRetryScheduled"]
    assert [(e.attempt, e.tool, e.call_id) for e in scheduled] == [
        (2, "run_tests", "coder-1-1"),
        (3, "run_tests", "coder-1-1"),
    ]
    assert slept == [e.delay for e in scheduled] and 0.25 <= slept[0] <= 0.5 <= slept[1] <= 1.0
    order = [e.kind for e in events if e.kind in ("ToolReturned", "ToolRetryScheduled")]
    assert order == ["ToolReturned", "ToolRetryScheduled"] * 2 + ["ToolReturned"]

    # A replay with another random source and a sleep that must not be called: identical.
    never = Backoff(base=0.5, rng=random.Random(99), sleep=lambda s: slept.append(-s))
    replay = Session(MemoryJournal(), "r-1", recorded=events, replay=True)
    loop.run(agent(Flaky(0), never), "task", replay, Budget(10_000), task_id="T1")
    assert replay.live and len(slept) == 2  # the whole record, and no wait replayed


def test_a_journal_written_before_backoff_replays_without_a_recorded_delay():
    journal = MemoryJournal()
    loop.run(
        agent(Flaky(failures=1), Backoff(sleep=lambda s: None)),
        "task",
        Session(journal, "r-1"),
        Budget(10_000),
        task_id="T1",
    )
    old = [r.event for r in journal.read("run-r-1") if r.event.kind != "ToolRetryScheduled"]
    waited: list[float] = []
    replay = Session(MemoryJournal(), "r-1", recorded=old, replay=True)
    loop.run(
        agent(Flaky(0), Backoff(sleep=waited.append)), "task", replay, Budget(10_000), task_id="T1"
    )
    assert replay.live and waited == []
