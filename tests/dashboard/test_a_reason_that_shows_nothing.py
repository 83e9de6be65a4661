"""A decision's reason must show something: one of only characters that draw nothing (U+200B,
U+2060, U+FEFF, a Hangul filler) passed the pages' and the API's "not blank", and the audit
kept an empty why. The pages and the API refuse it alike, naming the field and what it held;
nothing is journalled."""

from __future__ import annotations

from html import unescape

import pytest
from django.test import Client

from dashboard.models import ApiToken
from journal_store.models import Conflict, DeadLetter, StoredEvent
from runtime.unseen import unseen_reason
from services import intents
from tests.security.test_small_decision_reasons import conflict, letter

pytestmark = pytest.mark.django_db

UNSEEN = ["\u200b", "\u2060\ufeff", "\u200b \u3164\u00a0", "\u202e\u2800\ufe0f\u200d\u00ad"]
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def api(reviewer):
    client = Client()
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {ApiToken.issue(reviewer, 'script')[1]}"
    return client


@pytest.mark.parametrize("reason", UNSEEN)
def test_a_page_refuses_a_decision_whose_reason_shows_nothing(as_reviewer, reason):
    letter_id, conflict_id = letter(), conflict()
    events = StoredEvent.objects.count()
    for headers in ({}, HTMX):
        refused = as_reviewer.post(
            f"/review/dead-letters/{letter_id}/retry", {"reason": reason}, **headers
        )
        assert refused.status_code == 400
        said = unescape(refused.content.decode())
        # The box as its card labels it, not the field's code name ("reason: ...").
        assert "Why retry: the reason holds no character that can be seen (only U+" in said
        refused = as_reviewer.post(
            f"/review/conflicts/{conflict_id}/resolve",
            {"choice": "k1", "reason": reason},
            **headers,
        )
        assert refused.status_code == 400
        said = unescape(refused.content.decode())
        assert "Why: the reason holds no character that can be seen (only U+" in said
        assert "reason:" not in said
    assert StoredEvent.objects.count() == events
    assert DeadLetter.objects.get(letter_id=letter_id).status == "open"
    assert Conflict.objects.get(conflict_id=conflict_id).status == "open"


@pytest.mark.parametrize("reason", UNSEEN)
def test_the_api_refuses_a_decision_whose_reason_shows_nothing(api, reason):
    letter_id, conflict_id = letter(), conflict()
    events = StoredEvent.objects.count()
    asked = [
        (f"/api/review/dead-letters/{letter_id}/discard", {"reason": reason}),
        (
            "/api/review/dead-letters/decide",
            {"letters": [letter_id], "decision": "discard", "reason": reason},
        ),
        (f"/api/review/conflicts/{conflict_id}/resolve", {"choice": "k1", "reason": reason}),
    ]
    for path, body in asked:
        refused = api.post(path, body, content_type="application/json")
        assert refused.status_code == 422, (path, refused.content)
        (error,) = refused.json()["detail"]
        assert error["loc"][-1] == "reason"
        assert error["msg"].startswith("the reason holds no character that can be seen (only U+")
    assert StoredEvent.objects.count() == events


def test_the_refusal_names_what_the_reason_held():
    said = unseen_reason("\u200b\u2060\u200b")
    assert said == (
        "the reason holds no character that can be seen (only U+200B (ZERO WIDTH SPACE), "
        "U+2060 (WORD JOINER)): say why in words"
    )


@pytest.mark.parametrize("reason", ["ok", "\u200bok", "\u0301", "é", "日本", "🙂", "-"])
def test_a_reason_with_one_character_that_shows_is_taken(reason):
    assert unseen_reason(reason) is None


@pytest.mark.parametrize("words", UNSEEN)
def test_superseding_an_intent_needs_words_that_show(api, words):
    """A superseded intent's statement and reason are shown on every run it stops: the API
    (422, naming the field) and the service, which commands use too, refuse both alike."""
    events = StoredEvent.objects.count()
    for body, field in (
        ({"statement": "refund half", "reason": words}, "reason"),
        ({"statement": words, "reason": "the customer asked"}, "statement"),
    ):
        refused = api.post("/api/intents/ticket-A-1", body, content_type="application/json")
        assert refused.status_code == 422, refused.content
        (error,) = refused.json()["detail"]
        assert error["loc"][-1] == field
        assert error["msg"].startswith(f"the {field} holds no character that can be seen")
        with pytest.raises(intents.IntentError, match=f"the {field} holds no character"):
            intents.supersede("ticket-A-1", body["statement"], "someone", body["reason"])
    assert StoredEvent.objects.count() == events
