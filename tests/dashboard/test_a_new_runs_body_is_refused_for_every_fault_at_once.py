"""POST /api/runs refuses a body for every fault in one 422: what the schema refuses (an
allowance of 0, a team that is none, a value of the wrong type) and what the run's request
refuses of the fields the schema let through (the task's refusals, a scenario the team has
not), each at its field in the API's format. The schema's faults were answered alone, and the
task's only once they were mended; the form and the command line said all at once."""

from __future__ import annotations

import pytest

from dashboard import actions
from journal_store.models import StoredEvent

pytestmark = pytest.mark.django_db

LONG = "t" * 2_001
TOO_LONG = "the task is 2,001 characters; at most 2,000"


def post(api, body):
    answer = api.post("/api/runs", body, content_type="application/json")
    assert answer.status_code == 422, answer.content
    return answer.json()["detail"]


def refusal(name: str, why: str) -> dict[str, object]:
    """An entry as api.errors.invalid writes one."""
    return {"type": "value_error", "loc": ["body", name], "msg": why}


def test_two_schema_faults_and_two_task_faults_are_one_422_naming_all_four(api):
    body = {"team": "nope", "allowance": 0, "model": "scripted", "task": LONG}
    said = post(api, body)
    assert [error["loc"] for error in said] == [
        ["body", "team"],
        ["body", "allowance"],
        ["body", "task"],
        ["body", "task"],
    ]
    assert said[0]["msg"].startswith("'nope' is no team here")
    assert said[1]["msg"] == "Input should be greater than or equal to 1"
    assert said[2:] == [refusal("task", actions.SCRIPTED_TASK), refusal("task", TOO_LONG)]
    assert StoredEvent.objects.count() == 0  # no stream begun, nothing appended


def test_the_schemas_entries_are_as_they_were_beside_the_tasks(api):
    """A wrong type and a choice that is none keep pydantic's entries (their type, their ctx)."""
    alone = post(api, {"max_turns": "10", "votes": 2})
    with_task = post(api, {"max_turns": "10", "votes": 2, "task": LONG})
    assert with_task == [*alone, refusal("task", actions.SCRIPTED_TASK), refusal("task", TOO_LONG)]
    assert StoredEvent.objects.count() == 0


def test_a_scenario_the_team_has_not_is_said_with_the_schemas_faults(api):
    said = post(api, {"team": "repo-fix", "scenario": "nope", "max_seconds": 0})
    assert [error["loc"] for error in said] == [["body", "max_seconds"], ["body", "scenario"]]
    assert said[1]["msg"].startswith("'nope' is no scenario of repo-fix: ")


def test_a_task_refused_by_the_schema_is_not_judged_again(api):
    said = post(api, {"task": 5, "allowance": 0})
    assert [(error["loc"], error["type"]) for error in said] == [
        (["body", "task"], "string_type"),
        (["body", "allowance"], "greater_than_equal"),
    ]


def test_with_a_model_that_is_none_the_task_is_refused_for_itself_alone(api):
    """No backend is known to run it: not the scripted backend's refusal, which the person
    asked for none of."""
    said = post(api, {"model": "gpt", "task": LONG})
    assert said[0]["loc"] == ["body", "model"]
    assert said[1:] == [refusal("task", TOO_LONG)]


def test_a_body_with_only_task_faults_is_answered_as_before(api):
    said = post(api, {"model": "scripted", "task": LONG})
    assert said == [refusal("task", actions.SCRIPTED_TASK), refusal("task", TOO_LONG)]
    assert StoredEvent.objects.count() == 0


def test_a_sound_body_still_starts_its_run(api):
    answer = api.post("/api/runs", {"team": "repo-fix"}, content_type="application/json")
    assert answer.status_code == 201, answer.content


def test_a_scenario_refused_by_the_schema_is_not_judged_again(api):
    said = post(api, {"scenario": 5, "task": LONG})
    assert [(error["loc"], error["type"]) for error in said] == [
        (["body", "scenario"], "string_type"),
        (["body", "task"], "value_error"),
        (["body", "task"], "value_error"),
    ]
