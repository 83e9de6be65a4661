"""A decision posted without scripts goes back to the queue's page it was taken on, with its
filters (the words searched, the run, the status, the page), and says what was recorded there:
it went to the bare queue, said nothing, and the reviewer had to search again."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.urls import reverse

from journal_store.models import Conflict, DeadLetter
from tests.security.test_small_decision_reasons import RUN, conflict, letter

pytestmark = pytest.mark.django_db

ASKED = f"q=no+reply&run={RUN}&status=all"


def action_of(page: str, path: str) -> str:
    """The address the page's form for `path` posts to."""
    (found,) = re.findall(rf'action="({re.escape(path)}[^"]*)"', page)
    return unescape(found)


def test_a_letter_decided_without_scripts_goes_back_to_its_filtered_page(as_reviewer):
    letter_id = letter()
    page = as_reviewer.get(f"/review/dead-letters?{ASKED}").content.decode()
    retry = reverse("decide_letter", args=[letter_id, "retry"])
    action = action_of(page, retry)
    assert action == f"{retry}?{ASKED}"

    decided = as_reviewer.post(action, {"reason": "the reviewer is back"})
    assert decided.status_code == 302
    assert decided["Location"] == f"/review/dead-letters?{ASKED}"
    back = as_reviewer.get(decided["Location"]).content.decode()
    assert f'<p class="message ok" role="alert">retry recorded for {letter_id}</p>' in back
    assert DeadLetter.objects.get(letter_id=letter_id).status == "retried"


def test_a_conflict_decided_without_scripts_goes_back_to_its_filtered_page(as_reviewer):
    conflict_id = conflict()
    asked = f"run={RUN}&status=open&q=order"
    page = as_reviewer.get(f"/review/conflicts?{asked}").content.decode()
    action = action_of(page, f"/review/conflicts/{conflict_id}/resolve")
    assert action == f"/review/conflicts/{conflict_id}/resolve?{asked}"

    decided = as_reviewer.post(action, {"choice": "k1", "reason": "it was refunded"})
    assert decided.status_code == 302
    assert decided["Location"] == f"/review/conflicts?{asked}"
    back = as_reviewer.get(decided["Location"]).content.decode()
    said = f'<p class="message ok" role="alert">resolution recorded for {conflict_id}</p>'
    assert said in back
    assert Conflict.objects.get(conflict_id=conflict_id).status != "open"


def test_a_refusal_without_scripts_links_back_to_the_filtered_page(as_reviewer):
    letter_id = letter()
    retry = reverse("decide_letter", args=[letter_id, "retry"])
    refused = as_reviewer.post(f"{retry}?{ASKED}", {"reason": ""})
    assert refused.status_code == 400
    assert f'<a href="/review/dead-letters?{ASKED.replace("&", "&amp;")}">Back to' in (
        refused.content.decode()
    )


def test_the_way_back_is_always_the_queue_on_this_host(as_reviewer):
    # Whatever the form's address carries, the answer goes to the queue's own path here.
    letter_id = letter()
    discard = reverse("decide_letter", args=[letter_id, "discard"])
    decided = as_reviewer.post(
        f"{discard}?next=//evil.example/x",
        {"reason": "gone for good"},
    )
    assert decided["Location"].startswith("/review/dead-letters?")
    assert "//evil" not in decided["Location"].split("?")[0]
