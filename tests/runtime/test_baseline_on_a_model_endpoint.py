"""The single-agent baseline of a team run on an OpenAI-compatible endpoint flies on that
endpoint, asking for the model the team's coder asked for, with the bill on that model."""

from __future__ import annotations

import json

import pytest

from runtime import baseline, flight, views
from runtime.jsonl import JsonlJournal
from runtime.team import Services
from tests.fakellm import Reply, completion, wire_call

pytestmark = pytest.mark.slow

FIX = '    fields = line.split(",")'
GUARDED = "    if not line.strip():\n        return []\n" + FIX
USAGE = {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320}


def answer(name: str, **args: object) -> Reply:
    return Reply(completion(None, [wire_call(name, json.dumps(args), f"call_{name}")], USAGE))


def test_a_baseline_of_an_endpoint_team_run_flies_on_the_coders_model(server, tmp_path):
    team = flight.plan("repo-fix", "first-flight", "r-team", models={"coder": "endpoint:m-big"})
    solo = baseline.plan_baseline(team, "r-team", "r-base")
    # The coder's backend and model name, not the team's default (scripted).
    assert (solo.model, solo.model_names, solo.baseline_of) == (
        "endpoint",
        {"coder": "m-big"},
        "r-team",
    )
    server.queue(
        answer("read_file", path="textparse/parser.py"),
        answer("edit_file", path="textparse/parser.py", old=FIX, new=GUARDED),
        answer("run_tests"),
        answer("done", summary="parse('') returns []; the suite is green"),
    )
    env = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "m-default"}
    journal = JsonlJournal(tmp_path / "j.jsonl")
    outcome = flight.fly(journal, solo, "r-base", tmp_path, services=Services(models=env))
    assert outcome.status == "done", outcome.reason
    assert {r.body["model"] for r in server.requests} == {"m-big"}
    records = flight.run_records(journal, "r-base")
    assert baseline.baseline_of(records) == "r-team"
    bill = views.bill(records)
    assert bill["agents"]["coder"]["model"] == "m-big"
    assert bill["total"]["tokens"] == 4 * 320
    server.httpd.shutdown()
    assert flight.replay(journal, "r-base").identical
