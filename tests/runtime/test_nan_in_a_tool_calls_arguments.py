"""NaN and Infinity, which Python's json reads and JSON has not, in a tool call's arguments are
unreadable arguments, refused back to the model like any others. They were taken as numbers:
the loop went on with nan while the journal wrote null, and the run no longer replayed
("differs at version 12 ... window_chars 720 vs 722")."""

from __future__ import annotations

from typing import Any

import pytest

from runtime import flight
from runtime.events import ModelResponded, ToolReturned
from runtime.jsonl import JsonlJournal
from runtime.model import UNREADABLE_ARGS
from runtime.openai_wire import parse_tool_call
from runtime.team import Services
from tests.fakellm import Reply, completion, wire_call

WRITE = '{"path": "tests/test_n.py", "content": "x = 1\\n", "extra": %s}'


@pytest.mark.parametrize(
    "arguments",
    [
        WRITE % "NaN",
        WRITE % "Infinity",
        WRITE % "-Infinity",
        WRITE % "1e400",  # read as inf
        {"path": "a.py", "extra": float("nan")},  # an object sent whole, NaN in the reply
    ],
)
def test_a_number_json_has_not_makes_the_arguments_unreadable(arguments: Any) -> None:
    raw = {"id": "c1", "function": {"name": "write_file", "arguments": arguments}}

    kept = parse_tool_call(raw, 0, keep_unreadable=True)

    assert list(kept.args) == [UNREADABLE_ARGS]
    assert kept.args[UNREADABLE_ARGS].startswith("not valid JSON")


def test_finite_numbers_still_read() -> None:
    raw = {"id": "c1", "function": {"name": "f", "arguments": '{"n": 1e308, "m": -0.5}'}}
    assert parse_tool_call(raw, 0).args == {"n": 1e308, "m": -0.5}


def test_the_call_is_refused_to_the_model_and_the_run_replays(server, tmp_path):
    models = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "some-model"}
    server.queue(
        Reply(completion(None, [wire_call("write_file", WRITE % "NaN", "c1")])),
        Reply(completion(None, [wire_call("done", '{"summary": "tried"}', "c2")])),
    )
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan("solo", "solo-fix", "r-nan", model="endpoint")

    flight.fly(journal, config, "r-nan", tmp_path, services=Services(models=models))

    told = [m for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert "not valid JSON" in told[0]["content"] and "NaN" in told[0]["content"]
    events = [r.event for r in journal.read("run-r-nan")]
    [asked, _] = [e for e in events if isinstance(e, ModelResponded)]
    assert list(asked.tool_calls[0].args) == [UNREADABLE_ARGS]
    [refused] = [e for e in events if isinstance(e, ToolReturned)]
    assert refused.error is not None and "send the call again" in refused.error.message
    assert flight.replay(journal, "r-nan").identical
