"""A ruling's id is its idempotency key, and the client chooses it (the API's `ruling_id`, the
form's hidden field): another reviewer sending the id of a ruling already taken, with the same
choice and reason, was answered 200 (the page: "resolution recorded") as if the decision were
theirs, while the record names the first. They are told who decided what, 409, and nothing is
written; the first reviewer's own post again is still answered with their decision."""

from __future__ import annotations

import html

import pytest
from django.test import Client

from dashboard.models import ApiToken
from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime.events import ConflictResolved
from tests.dashboard.conftest import client_for, make_user
from tests.dashboard.test_api import parked_conflict

pytestmark = pytest.mark.django_db

RULING = {"choice": "k1", "reason": "the bank confirms the refund", "ruling_id": "order-4471"}
SAID = (
    "conflict c-1 has already been decided by reviewer, who chose 'refunded' (claim k1) for "
    "the reason 'the bank confirms the refund'"
)


def api_for(user) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {ApiToken.issue(user, 'tests')[1]}")


def decisions(conflict: str) -> list[ConflictResolved]:
    records = DjangoJournal().read(f"conflict-{conflict}")
    return [r.event for r in records if isinstance(r.event, ConflictResolved)]


def test_another_reviewer_sending_the_same_ruling_is_told_who_decided(reviewer, done_run):
    ann = make_user("ann", decide=True)
    conflict = parked_conflict(done_run)
    url = f"/api/review/conflicts/{conflict}/resolve"
    first = api_for(reviewer).post(url, RULING, "application/json")
    assert first.status_code == 200, first.content
    before = StoredEvent.objects.count()
    theirs = api_for(ann).post(url, RULING, "application/json")
    assert theirs.status_code == 409 and theirs.json()["detail"] == SAID
    page = client_for(ann).post(f"/review/conflicts/{conflict}/resolve", RULING)
    assert page.status_code == 409 and SAID in html.unescape(page.content.decode())
    assert StoredEvent.objects.count() == before
    again = api_for(reviewer).post(url, RULING, "application/json")
    assert again.status_code == 200 and again.json() == first.json()
    assert StoredEvent.objects.count() == before
    [decided] = decisions(conflict)
    assert (decided.by, decided.ruling_id) == ("reviewer", "order-4471")
