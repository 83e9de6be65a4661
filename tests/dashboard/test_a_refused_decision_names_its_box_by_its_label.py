"""A decision's form refused for anything but a blank box names the box as the page labels it
(a conflict's "Why" and "Decision", a letter's "Why retry", the decision on several's "Why"),
where it named the field's code name: "reason: the reason holds..." of the box labelled "Why".
The API goes on naming its body's fields. Nothing is journalled."""

from __future__ import annotations

from html import unescape

import pytest
from django.test import Client

from dashboard.models import ApiToken
from journal_store import projection
from journal_store.models import StoredEvent
from services.control import Control
from tests.dashboard.conftest import run_of
from tests.security.test_small_decision_reasons import conflict, letter

pytestmark = pytest.mark.django_db

QUEUE = "/review/dead-letters"
HTMX = {"HTTP_HX_REQUEST": "true"}
CODE_NAMES = ("reason:", "choice:", "letter:", "decision:", "listed:")


@pytest.fixture
def api(reviewer):
    client = Client()
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {ApiToken.issue(reviewer, 'script')[1]}"
    return client


@pytest.fixture
def two(owner) -> list[str]:
    """Two open dead letters, so that the queue offers the decision on several."""
    ids = [Control(run_of("first-flight", steps=1)).dead_letter("died", 3, "Boom").letter_id]
    ids.append(Control(run_of("premature-done", steps=1)).dead_letter("died", 3, "x").letter_id)
    projection.catch_up()
    return ids


def said(answer) -> str:
    assert answer.status_code == 400, answer.content[:500]
    text = unescape(answer.content.decode())
    for name in CODE_NAMES:
        assert name not in text
    return text


@pytest.mark.parametrize("headers", [{}, HTMX])
def test_a_ruling_whose_reason_shows_nothing_names_the_why_box(as_reviewer, headers):
    conflict_id = conflict()
    events = StoredEvent.objects.count()
    answer = as_reviewer.post(
        f"/review/conflicts/{conflict_id}/resolve", {"choice": "k1", "reason": "\u200b"}, **headers
    )
    assert "Why: the reason holds no character that can be seen (only U+200B" in said(answer)
    assert StoredEvent.objects.count() == events


def test_a_ruling_names_each_box_it_refuses_in_the_pages_order(as_reviewer):
    conflict_id = conflict()
    events = StoredEvent.objects.count()
    form = {"choice": "k" * 65, "reason": "r" * 2_001, "ruling_id": "not an id"}
    text = said(as_reviewer.post(f"/review/conflicts/{conflict_id}/resolve", form))
    assert (
        "Decision: Ensure this value has at most 64 characters (it has 65).; "
        "Why: Ensure this value has at most 2000 characters (it has 2001).; "
        "The form's hidden ruling_id: it was changed (it is drawn with the form" in text
    )
    assert "Enter a valid value" not in text
    assert StoredEvent.objects.count() == events


@pytest.mark.parametrize("decision", ["retry", "discard"])
@pytest.mark.parametrize("headers", [{}, HTMX])
def test_a_letters_decision_names_its_box_as_its_card_does(as_reviewer, decision, headers):
    letter_id = letter()
    events = StoredEvent.objects.count()
    answer = as_reviewer.post(
        f"/review/dead-letters/{letter_id}/{decision}", {"reason": "a\x00b"}, **headers
    )
    assert f"Why {decision}: the reason holds a NUL character (U+0000)" in said(answer)
    assert StoredEvent.objects.count() == events


@pytest.mark.parametrize(
    ("form", "words"),
    [
        ({"letter": "X", "reason": "\u2060"}, "Why: the reason holds no character that can be"),
        ({"letter": "a b", "reason": "r"}, "The letters ticked: 'a b' is not a dead letter's id"),
        (
            {"every": "1", "listed": "a b", "reason": "r"},
            "every open letter on this page: 'a b' is not a dead letter's id",
        ),
        ({"reason": "r"}, ">tick the letters to decide, or choose every letter on this page<"),
    ],
)
def test_the_decision_on_several_names_its_boxes_as_its_form_does(as_reviewer, two, form, words):
    form = {"decision": "retry"} | {k: (two[0] if v == "X" else v) for k, v in form.items()}
    events = StoredEvent.objects.count()
    assert words in said(as_reviewer.post(f"{QUEUE}/decide", form))
    assert StoredEvent.objects.count() == events


def test_the_api_names_the_fields_by_their_names_still(api):
    conflict_id = conflict()
    refused = api.post(
        f"/api/review/conflicts/{conflict_id}/resolve",
        {"choice": "k1", "reason": "\u200b"},
        content_type="application/json",
    )
    assert refused.status_code == 422
    (error,) = refused.json()["detail"]
    assert error["loc"][-1] == "reason"
    assert "Why" not in error["msg"]
