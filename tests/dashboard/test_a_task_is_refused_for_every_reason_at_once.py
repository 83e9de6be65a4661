"""A new run's task refused for more than one reason is refused for each at once, on the form
(every sentence under the Task box), in the API's 422 (an entry for each at the task) and on
the command line: a task too long for the scripted backend was refused its length alone (the
form's in Django's words, the API's in pydantic's), and refused again for the backend once the
person had shortened it."""

from __future__ import annotations

import html
import re

import pytest
from django.core.management import CommandError, call_command

from dashboard import actions
from journal_store.models import StoredEvent

pytestmark = pytest.mark.django_db

LONG = "t" * 2_001
TOO_LONG = "the task is 2,001 characters; at most 2,000"


def under_the_task_box(page) -> list[str]:
    """The refusals the page lists under its Task box, as a person reads them."""
    found = re.search(r'<ul class="errorlist"[^>]*id="id_task_error">(.*?)</ul>', page, re.S)
    assert found, "no refusal under the Task box"
    return [html.unescape(said) for said in re.findall(r"<li>(.*?)</li>", found.group(1), re.S)]


def test_the_form_says_a_long_task_for_the_scripted_backend_is_refused_for_both(as_owner):
    body = {"team": "repo-fix", "scenario": "first-flight", "model": "scripted", "task": LONG}
    page = as_owner.post("/runs/new", body)
    assert page.status_code == 400
    assert under_the_task_box(page.content.decode()) == [actions.SCRIPTED_TASK, TOO_LONG]
    assert "Ensure this value" not in page.content.decode()
    assert StoredEvent.objects.count() == 0


def test_the_form_says_a_nul_in_a_task_for_the_scripted_backend_with_the_backends_refusal(
    as_owner,
):
    # Django's "Null characters are not allowed." came alone, and kept the task from clean().
    body = {"team": "repo-fix", "scenario": "first-flight", "model": "scripted", "task": "a\x00b"}
    page = as_owner.post("/runs/new", body)
    assert page.status_code == 400
    said = under_the_task_box(page.content.decode())
    assert said[0] == actions.SCRIPTED_TASK and len(said) == 2
    assert said[1].startswith("the task holds") and "U+0000" in said[1]
    assert "Null characters" not in page.content.decode()
    assert StoredEvent.objects.count() == 0


def test_the_forms_task_box_still_stops_typing_at_the_limit(as_owner):
    page = as_owner.get("/runs/new").content.decode()
    assert re.search(r'<textarea name="task"[^>]*maxlength="2000"', page)


def test_the_api_names_the_task_once_for_each_refusal(api):
    body = {"team": "repo-fix", "scenario": "first-flight", "model": "scripted", "task": LONG}
    answer = api.post("/api/runs", body, content_type="application/json")
    assert answer.status_code == 422, answer.content
    assert answer.json() == {
        "detail": [
            {"type": "value_error", "loc": ["body", "task"], "msg": actions.SCRIPTED_TASK},
            {"type": "value_error", "loc": ["body", "task"], "msg": TOO_LONG},
        ]
    }
    assert StoredEvent.objects.count() == 0


def test_a_long_task_holding_a_control_character_is_refused_for_both(api, settings):
    settings.MODEL_BASE_URL = "http://127.0.0.1:9/v1"
    settings.MODELS = {"MINUTES_MODEL": "some-model"}
    body = {"team": "repo-fix", "model": "endpoint", "task": "ring \x07" + LONG}
    answer = api.post("/api/runs", body, content_type="application/json")
    said = [(e["loc"], e["msg"]) for e in answer.json()["detail"]]
    assert [loc for loc, _ in said] == [["body", "task"]] * 2
    assert said[0][1] == "the task is 2,007 characters; at most 2,000"
    assert said[1][1].startswith("the task holds") and "U+0007" in said[1][1]


def test_the_command_line_says_both():
    with pytest.raises(CommandError) as refused:
        call_command("start_run", "--team", "repo-fix", "--task", LONG)
    assert str(refused.value) == f"--task: {actions.SCRIPTED_TASK}; --task: {TOO_LONG}"
    assert StoredEvent.objects.count() == 0
