"""Every text a person writes is held to one rule (runtime/written.py): no control character
but the tab and the line breaks. A fork's message refused ESC while a decision's, a steering's
and an intent's reasons took it (journalled, shown escaped on the pages, raw by a terminal that
printed the audit). Each door refuses it now, naming the field and the character; nothing is
written."""

from __future__ import annotations

from html import unescape

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from dashboard.models import ApiToken
from journal_store.models import Conflict, DeadLetter, StoredEvent
from runtime.written import unwritten_reason
from services import intents
from tests.dashboard.conftest import run_of
from tests.security.test_small_decision_reasons import conflict, letter

pytestmark = pytest.mark.django_db

# A terminal's title set and screen cleared; a C1 CSI; DEL; a bell alone.
CONTROLS = ["x\x1b]0;pwned\x07\x1b[2Jy", "a\x9b31mb", "rub\x7fout", "\x07ring"]


@pytest.fixture
def api(reviewer):
    client = Client()
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {ApiToken.issue(reviewer, 'script')[1]}"
    return client


def test_the_refusal_names_the_character_and_where():
    assert unwritten_reason("ok\x1b[2J") == (
        "the reason holds a control character (U+001B) at character 3; tabs and line breaks "
        "are the only ones text here may hold"
    )
    assert unwritten_reason("line one\r\n\tline two") is None


@pytest.mark.parametrize("reason", CONTROLS)
def test_the_pages_refuse_a_decision_reason_with_a_control(as_reviewer, reason):
    letter_id, conflict_id = letter(), conflict()
    events = StoredEvent.objects.count()
    refused = as_reviewer.post(f"/review/dead-letters/{letter_id}/retry", {"reason": reason})
    assert refused.status_code == 400
    said = unescape(refused.content.decode())
    assert "Why retry: the reason holds a control character (U+" in said
    refused = as_reviewer.post(
        f"/review/conflicts/{conflict_id}/resolve", {"choice": "k1", "reason": reason}
    )
    assert refused.status_code == 400
    assert "Why: the reason holds a control character" in unescape(refused.content.decode())
    assert StoredEvent.objects.count() == events
    assert DeadLetter.objects.get(letter_id=letter_id).status == "open"
    assert Conflict.objects.get(conflict_id=conflict_id).status == "open"


@pytest.mark.parametrize("reason", CONTROLS)
def test_the_api_refuses_a_decision_reason_with_a_control(api, reason):
    letter_id, conflict_id = letter(), conflict()
    events = StoredEvent.objects.count()
    for path, body in (
        (f"/api/review/dead-letters/{letter_id}/discard", {"reason": reason}),
        (f"/api/review/conflicts/{conflict_id}/resolve", {"choice": "k1", "reason": reason}),
    ):
        refused = api.post(path, body, content_type="application/json")
        assert refused.status_code == 422, (path, refused.content)
        (error,) = refused.json()["detail"]
        assert error["loc"][-1] == "reason"
        assert error["msg"].startswith("the reason holds a control character (U+")
    assert StoredEvent.objects.count() == events


def test_a_stop_reason_with_a_control_is_refused_at_every_door(as_owner, owner):
    run_id = run_of("first-flight", steps=1)
    events = StoredEvent.objects.count()
    refused = as_owner.post(f"/runs/{run_id}/interrupt", {"reason": CONTROLS[0]})
    assert refused.status_code == 400
    assert "control character (U+001B) at character 2" in unescape(refused.content.decode())
    with pytest.raises(CommandError, match=r"control character \(U\+009B\) at character 2"):
        call_command("interrupt_run", run_id, reason=CONTROLS[1], by="ann")
    assert StoredEvent.objects.count() == events


def test_an_intents_words_with_a_control_are_refused(api):
    events = StoredEvent.objects.count()
    for body, field in (
        ({"statement": "refund half", "reason": CONTROLS[0]}, "reason"),
        ({"statement": CONTROLS[2], "reason": "the customer asked"}, "statement"),
    ):
        refused = api.post("/api/intents/ticket-A-1", body, content_type="application/json")
        assert refused.status_code == 422, refused.content
        (error,) = refused.json()["detail"]
        assert error["loc"][-1] == field
        assert error["msg"].startswith(f"the {field} holds a control character")
        with pytest.raises(intents.IntentError, match=f"the {field} holds a control character"):
            intents.supersede("ticket-A-1", body["statement"], "someone", body["reason"])
    assert StoredEvent.objects.count() == events


def test_tabs_and_line_breaks_are_words(as_owner):
    run_id = run_of("first-flight", steps=1)
    answer = as_owner.post(f"/runs/{run_id}/interrupt", {"reason": "first\r\n\tsecond"})
    assert answer.status_code == 302
