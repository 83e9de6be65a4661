"""Every way a tool call can fail comes back as an observation, never an exception."""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from typing import Any

import pytest

from runtime.events import VALUE_DEPTH, ToolReturned
from runtime.journal import MemoryJournal
from runtime.model import ToolCall
from runtime.tools import Tool, Toolbox, ToolExit, ToolFailure, execute, schema


def echo(text: str) -> str:
    return text


def boom() -> None:
    raise KeyError("no such order")


def slow() -> str:
    time.sleep(5)
    return "late"


def exits() -> str:
    proc = subprocess.run(["sh", "-c", "echo dying >&2; exit 3"], capture_output=True, text=True)
    if proc.returncode:
        raise ToolExit("sh", proc.returncode, proc.stderr)
    return proc.stdout


TOOLS = [
    Tool("echo", "Say it back.", schema({"text": {"type": "string"}}, ["text"]), echo),
    Tool("boom", "Fails.", schema({}), boom),
    Tool("slow", "Hangs.", schema({}), slow, timeout=0.2),
    Tool("exits", "Exits 3.", schema({}), exits),
    Tool("secret", "Not for everyone.", schema({}), lambda: "classified"),
]


@pytest.fixture
def box():
    return Toolbox(TOOLS, allow=["echo", "boom", "slow", "exits"])


def run(box, name, **args):
    call = ToolCall(id="c1", name=name, args=args)
    try:
        tool = box.check(call, "coder")
    except ToolFailure as exc:
        return {"tool": name, "error": {"type": type(exc).__name__, "message": str(exc)}}
    return execute(tool, args).observation()


def test_a_good_call_returns_its_result(box):
    assert run(box, "echo", text="hi") == {"tool": "echo", "result": "hi"}


@pytest.mark.parametrize(
    "name, args, error_type, message",
    [
        ("echo", {}, "InvalidArguments", "'text' is a required property"),
        ("echo", {"text": 5}, "InvalidArguments", "text: 5 is not of type 'string'"),
        ("echo", {"text": "a", "extra": 1}, "InvalidArguments", "Additional properties"),
        ("boom", {}, "KeyError", "no such order"),
        ("slow", {}, "ToolTimeout", "no answer within 0.2 s"),
        ("exits", {}, "ToolExit", "sh exited 3: dying"),
        ("secret", {}, "NotAllowed", "coder may not use 'secret'"),
        ("teleport", {}, "UnknownTool", "no tool named 'teleport'"),
    ],
)
def test_each_failure_is_an_observation_with_type_and_message(box, name, args, error_type, message):
    observation = run(box, name, **args)
    assert observation["tool"] == name
    assert observation["error"]["type"] == error_type
    assert message in observation["error"]["message"]


def test_the_model_is_shown_only_the_allowed_tools(box):
    assert [s["name"] for s in box.specs()] == ["echo", "boom", "slow", "exits"]
    assert box.specs()[0]["parameters"]["required"] == ["text"]


def test_a_tool_with_a_broken_schema_is_refused_when_defined():
    with pytest.raises(Exception, match="is not valid"):
        Tool("bad", "Bad schema.", {"type": "objekt"}, echo)


def nested(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = {"in": value}
    return value


@pytest.mark.parametrize("timeout", [None, 5.0])
def test_a_result_nested_past_what_the_journal_keeps_is_a_failure_the_agent_is_told(timeout):
    """A tool (an MCP server's, say) that answers 200 levels deep: its ToolReturned could not
    be stored (journal.check_batch refuses a line past 64 levels) and the loop would stop on
    it. The agent is told the tool ran and its result was not kept; the journal takes that."""
    deep = Tool("deep", "Deep.", schema({}), lambda: nested(200), timeout=timeout)
    outcome = execute(deep, {})
    assert outcome.failed and outcome.error is not None
    assert outcome.error.type == "ResultTooDeep"
    assert "deep ran, but its result nests" in outcome.error.message
    event = ToolReturned(run_id="r-1", tool="deep", result=outcome.result, error=outcome.error)
    MemoryJournal().append("run-r-1", [event], 0)  # what the loop writes of it is stored
    # As deep as a tool's result may be, it is its result.
    edge = Tool("edge", "Edge.", schema({}), lambda: nested(VALUE_DEPTH), timeout=timeout)
    assert execute(edge, {}).result == nested(VALUE_DEPTH)


@dataclass(frozen=True)
class Node:
    inner: Any


# A tool's result is any Python value: each way it can nest that its event is written with.
NESTINGS = {
    "tuples": lambda v: (v,),
    "frozensets": lambda v: frozenset({v}),
    "dataclasses": lambda v: Node(v),
    "lists of a type of their own": lambda v: type("Items", (list,), {})([v]),
}


@pytest.mark.parametrize("how", sorted(NESTINGS))
def test_a_result_nested_in_other_containers_is_counted_as_its_event_is(how):
    """Tuples, sets and dataclasses are written as JSON arrays and objects, and the append
    counts their depth (journal.check_batch): a result nested 200 deep in them is the tool's
    ResultTooDeep, not an event the loop cannot append; where only dicts and lists were
    counted, the loop stopped on it."""

    def nested(levels: int) -> Any:
        value: Any = "x"
        for _ in range(levels):
            value = NESTINGS[how](value)
        return value

    outcome = execute(Tool("deep", "Deep.", schema({}), lambda: nested(200)), {})
    assert outcome.error is not None and outcome.error.type == "ResultTooDeep"
    event = ToolReturned(run_id="r-1", tool="deep", result=outcome.result, error=outcome.error)
    MemoryJournal().append("run-r-1", [event], 0)
    edge = execute(Tool("edge", "Edge.", schema({}), lambda: nested(VALUE_DEPTH)), {})
    assert edge.error is None
    MemoryJournal().append("run-r-1", [ToolReturned(run_id="r-1", tool="e", result=edge.result)], 0)
