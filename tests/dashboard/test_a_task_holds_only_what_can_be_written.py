"""A new run's task is refused at entry, naming the character and where it is, when it holds a
control character (an escape sequence, a bell, a C1 control; a tab and line breaks are text) or
half a UTF-16 pair, or nothing that can be seen: on the form, in the API's body and on the
command line alike, and nothing is recorded. Each was taken, and the run's task journalled.
And the command line refuses an order id that is none in the form's words."""

from __future__ import annotations

import re

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from dashboard import actions
from dashboard.forms import NewRunForm
from journal_store.models import StoredEvent

pytestmark = pytest.mark.django_db

REFUSED = [
    ("fix the bug \x1b[2J now", "U+001B", "at character 13"),
    ("ring \x07 the bell", "U+0007)", "at character 6"),
    ("next\x85line", "U+0085", "at character 5"),
    ("delete\x7f", "U+007F)", "at character 7"),
    ("\u200b\u200b", "U+200B (ZERO WIDTH SPACE)", "holds no character that can be seen"),
]


@pytest.fixture(autouse=True)
def endpoint(settings):
    """A model backend, so that the task is the run's (the scripted agents take none)."""
    settings.MODEL_BASE_URL = "http://127.0.0.1:9/v1"
    settings.MODELS = {"MINUTES_MODEL": "some-model"}


def asked(task: str) -> dict[str, str]:
    return {"team": "repo-fix", "scenario": "first-flight", "model": "endpoint", "task": task}


@pytest.mark.parametrize(("task", "named", "why"), REFUSED)
def test_the_form_names_the_character_beside_the_task(task, named, why):
    form = NewRunForm(asked(task))
    assert not form.is_valid()
    [said] = form.errors["task"]
    assert said.startswith("the task holds") and named in said and why in said
    assert set(form.errors) == {"task"}


@pytest.mark.parametrize(("task", "named", "why"), REFUSED)
def test_the_api_answers_422_naming_the_task(token, task, named, why):
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    answer = api.post("/api/runs", asked(task), content_type="application/json")
    assert answer.status_code == 422, answer.content
    [error] = answer.json()["detail"]
    assert error["loc"] == ["body", "task"] and named in error["msg"] and why in error["msg"]
    assert StoredEvent.objects.count() == 0


@pytest.mark.parametrize(
    ("task", "named"), [*((t, n) for t, n, _ in REFUSED), ("bytes \udcff", "U+DCFF")]
)
def test_the_command_refuses_the_task_naming_it(task, named):
    with pytest.raises(CommandError, match=f"--task: the task holds .*{re.escape(named)}"):
        call_command("start_run", "--model", "endpoint", "--task", task)
    assert StoredEvent.objects.count() == 0


def test_a_tab_and_line_breaks_are_text():
    assert NewRunForm(asked("fix it:\tfirst\r\nthen the tests\nand U+200B\u200bhere")).is_valid()


@pytest.mark.parametrize("order", ["../../etc/passwd", "x" * 500, "a b", "\u202eabc", "-lead"])
def test_the_command_refuses_an_order_that_is_none_in_the_forms_words(order):
    """As the form and the API refuse it, where the command named 'settings.desk.order_id' in
    pydantic's words."""
    with pytest.raises(CommandError) as refused:
        call_command("start_run", "--team", "support-desk", f"--order={order}")
    assert str(refused.value) == f"--order: {actions.ORDER_REFUSAL}"
    assert StoredEvent.objects.count() == 0
