"""A person's ruling carries its id (the form's hidden `ruling_id`, or one the API derives):
posted twice (a double-click, a client's retry), it is applied once and both posts answer with
the one decision; the same id for another choice is refused at the mutation gate."""

from __future__ import annotations

import re

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime.events import ConflictResolved, MutationRefused
from tests.dashboard.test_api import parked_conflict

pytestmark = pytest.mark.django_db


def decisions(conflict):
    return [
        r.event
        for r in DjangoJournal().read(f"conflict-{conflict}")
        if isinstance(r.event, ConflictResolved)
    ]


def test_the_pages_form_posted_twice_decides_once(as_reviewer, done_run):
    conflict = parked_conflict(done_run)
    page = as_reviewer.get("/review/conflicts").content.decode()
    [ruling_id] = re.findall(r'name="ruling_id" value="(rl-[0-9a-f]+)"', page)
    form = {"choice": "k1", "reason": "the bank confirms the refund", "ruling_id": ruling_id}
    first = as_reviewer.post(f"/review/conflicts/{conflict}/resolve", form, HTTP_HX_REQUEST="true")
    written = StoredEvent.objects.count()
    second = as_reviewer.post(f"/review/conflicts/{conflict}/resolve", form, HTTP_HX_REQUEST="true")
    assert (first.status_code, second.status_code) == (200, 200)
    assert StoredEvent.objects.count() == written  # the second post wrote nothing
    [decided] = decisions(conflict)
    assert (decided.choice, decided.ruling_id, decided.by) == ("k1", ruling_id, "reviewer")
    other = as_reviewer.post(
        f"/review/conflicts/{conflict}/resolve",
        {**form, "choice": "k2"},
        HTTP_HX_REQUEST="true",
    )
    assert other.status_code == 409 and b"(idempotency)" in other.content
    [refused] = [r.event for r in DjangoJournal().read(f"gate-{done_run}")]
    assert isinstance(refused, MutationRefused) and refused.key == ruling_id
    assert len(decisions(conflict)) == 1


def test_the_api_derives_the_rulings_id_so_a_retried_post_applies_once(api_client, done_run):
    conflict = parked_conflict(done_run)
    body = {"choice": "k1", "reason": "the bank confirms the refund"}
    url = f"/api/review/conflicts/{conflict}/resolve"
    first = api_client.post(url, body, content_type="application/json")
    written = StoredEvent.objects.count()
    again = api_client.post(url, body, content_type="application/json")
    assert (first.status_code, again.status_code) == (200, 200)
    assert again.json()["resolution"] == first.json()["resolution"]
    assert StoredEvent.objects.count() == written
    [decided] = decisions(conflict)
    assert decided.ruling_id.startswith("rl-")


@pytest.fixture
def api_client(token):
    from django.test import Client

    client = Client()
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return client
