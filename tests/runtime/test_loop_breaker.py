"""The loop breaker stops an agent going round in circles: the same call again and again (the
repeat is not run), or the same failure again and again whatever the arguments (one conflict
met over and over). Each trip is journalled with its reason, replays identically, and is a
finding; older journals without the breaker show the loop to `diagnose` all the same."""

from __future__ import annotations

from runtime import loop
from runtime.budget import Budget
from runtime.diagnose import diagnose
from runtime.journal import MemoryJournal
from runtime.model import ScriptedClient, call
from runtime.session import Session
from runtime.tools import Tool, Toolbox, ToolFailure, schema


class Moved(ToolFailure):
    pass


def agent(script, tools, repeats=3):
    return loop.Agent(
        "order-agent",
        ScriptedClient(script, "order-agent"),
        Toolbox(tools),
        "sys",
        repeats=repeats,
    )


def fly(a):
    journal = MemoryJournal()
    result = loop.run(a, "task", Session(journal, "r-1"), Budget(10_000), task_id="T1")
    last = journal.read("run-r-1")[-1].event
    assert last.kind == "StatusReported"  # the agent's last word
    assert last.status == ("FAILED" if result.status == "looping" else "COMPLETED")
    return result, journal


def before_last_word(journal):
    """The run's events up to where the agent stopped (its last word comes after)."""
    return [r.event for r in journal.read("run-r-1")][:-1]


def replays(journal, a):
    recorded = [r.event for r in journal.read("run-r-1")]
    replay = Session(MemoryJournal(), "r-1", recorded=recorded, replay=True)
    loop.run(a, "task", replay, Budget(10_000), task_id="T1")
    return replay.live


def test_the_third_identical_call_is_not_run_and_the_run_ends_looping():
    runs = []
    search = Tool("search", "Search.", schema({"q": {"type": "string"}}), lambda q: runs.append(q))
    script = [call("search", 10, q="refund")] * 4 + [call("done", 5)]
    result, journal = fly(agent(script, [search]))
    assert result.status == "looping" and loop.ending(result.status) == "inconclusive"
    assert runs == ["refund", "refund"]
    events = before_last_word(journal)
    tripped = events[-1]
    assert (tripped.kind, tripped.breaker, tripped.agent, tripped.task_id) == (
        "BreakerTripped",
        "loop:order-agent",
        "order-agent",
        "T1",
    )
    assert tripped.reason == "search called 3 times in a row with the same arguments"
    assert replays(journal, agent(script, [search]))
    [found] = diagnose(journal.read_all())
    assert found["kind"] == "looping_agent" and "stopped by the loop breaker" in found["summary"]
    assert found["positions"][-1] == journal.read("run-r-1")[-2].position


def test_the_same_conflict_met_three_times_trips_it_whatever_the_arguments():
    def set_status(version: int) -> None:
        raise Moved("the order moved: it is shipped at version 7")

    tool = Tool("set_status", "Set.", schema({"version": {"type": "integer"}}), set_status)
    script = [call("set_status", 10, version=v) for v in (4, 5, 6, 7)]
    result, journal = fly(agent(script, [tool]))
    assert result.status == "looping"
    events = before_last_word(journal)
    assert [e.kind for e in events].count("ToolReturned") == 3
    assert events[-1].reason == (
        "set_status failed the same way 3 times in a row "
        "(Moved: the order moved: it is shipped at version 7)"
    )
    assert replays(journal, agent(script, [tool]))
    [found] = diagnose(journal.read_all())
    assert "met the same failure of set_status 3 times" not in found["summary"]  # joined
    assert "stopped by the loop breaker: set_status failed the same way" in found["summary"]


def test_calls_that_change_or_succeed_do_not_trip_it():
    flip = Tool("read", "Read.", schema({"path": {"type": "string"}}), lambda path: path)
    script = [call("read", 10, path=p) for p in "abababab"] + [call("done", 5)]
    result, _journal = fly(agent(script, [flip]))
    assert result.status == "done"


def test_without_repeats_the_loop_breaker_is_off():
    search = Tool("search", "Search.", schema({"q": {"type": "string"}}), lambda q: q)
    script = [call("search", 10, q="x")] * 4 + [call("done", 5)]
    result, _journal = fly(agent(script, [search], repeats=None))
    assert result.status == "done"


def test_an_old_journal_shows_both_loops_without_the_breaker():
    def set_status(version: int) -> None:
        raise Moved("the order moved")

    tools = [
        Tool("set_status", "Set.", schema({"version": {"type": "integer"}}), set_status),
        Tool("search", "Search.", schema({"q": {"type": "string"}}), lambda q: q),
    ]
    script = [call("set_status", 10, version=v) for v in (1, 2, 3)]
    script += [call("search", 10, q="x")] * 3 + [call("done", 5)]
    result, journal = fly(agent(script, tools, repeats=None))
    assert result.status == "done"
    summaries = [f["summary"] for f in diagnose(journal.read_all())]
    assert summaries == [
        "order-agent met the same failure of set_status 3 times in a row (Moved: the order moved)",
        "order-agent called search 3 times in a row with the same arguments",
    ]
