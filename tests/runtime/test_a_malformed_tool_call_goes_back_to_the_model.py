"""A model that writes a tool call's arguments wrong (not JSON, or not an object), as small
models do, gets the call refused back, saying what it sent, and another turn to send it again.
It used to fail the whole model call, and the run ended escalated at the first slip. The refusal
is journalled with the call as it was asked for, so the run replays to the same journal."""

from __future__ import annotations

from runtime import flight
from runtime.events import ToolReturned
from runtime.jsonl import JsonlJournal
from runtime.team import Services
from tests.fakellm import Reply, completion, wire_call


def test_the_call_is_refused_to_the_model_which_goes_on_and_the_run_replays(server, tmp_path):
    models = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "some-model"}
    server.queue(
        Reply(completion(None, [wire_call("list_files", "{path: .}", "c1")])),
        Reply(completion(None, [wire_call("done", '{"summary": "looked"}', "c2")])),
    )
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan("solo", "solo-fix", "r-slip", model="endpoint")

    outcome = flight.fly(journal, config, "r-slip", tmp_path, services=Services(models=models))

    assert len(server.requests) == 2  # a second turn, after the refusal
    told = [m for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert "not valid JSON" in told[0]["content"] and "{path: .}" in told[0]["content"]
    [refused] = [r.event for r in journal.read("run-r-slip") if isinstance(r.event, ToolReturned)]
    assert refused.error is not None and "send the call again" in refused.error.message
    assert outcome.status != "escalated", outcome.reason  # the coder said done; the suite judged
    assert flight.replay(journal, "r-slip").identical
