"""Any role can run on the OpenAI-compatible client: here the reviewer, against a local server
that speaks the protocol, while the other roles stay scripted."""

from __future__ import annotations

import json

import pytest

from runtime import flight
from runtime.jsonl import JsonlJournal
from runtime.team import Services
from tests.fakellm import Reply, completion, wire_call

pytestmark = pytest.mark.slow


def test_the_reviewer_on_a_model_endpoint_sees_only_its_tools_and_its_mail(server, tmp_path):
    models = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "local-test-model"}
    verdict = {"verdict": "accept", "reasons": "minimal guard; 2 passed, 0 failed"}
    server.queue(
        Reply(
            completion(
                None,
                [wire_call("done", json.dumps(verdict))],
                {"prompt_tokens": 400, "completion_tokens": 30, "total_tokens": 430},
            )
        )
    )
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan("repo-fix", "first-flight", "r-live", models={"reviewer": "endpoint"})
    outcome = flight.fly(journal, config, "r-live", tmp_path, services=Services(models=models))

    assert outcome.status == "done"
    [request] = server.requests
    shown = [t["function"]["name"] for t in request.body["tools"]]
    assert shown == ["list_files", "read_file", "done"]
    window = "\n".join(m["content"] for m in request.body["messages"])
    assert "[REQUEST from orchestrator on T1" in window and "+    if not line.strip():" in window
    assert "Decompose the task" not in window  # not the orchestration history
    events = [r.event for r in journal.read("run-r-live")]
    reviewer = [e for e in events if e.kind == "ModelResponded" and e.agent == "reviewer"]
    assert [e.usage.total for e in reviewer] == [430]
    accept = next(e for e in events if e.kind == "MessageSent" and e.performative == "accept")
    assert accept.payload["reasons"] == verdict["reasons"]
    # and the run replays from its journal alone, with no server at all
    server.httpd.shutdown()
    assert flight.replay(journal, "r-live").identical
