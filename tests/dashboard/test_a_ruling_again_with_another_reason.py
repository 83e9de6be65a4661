"""A conflict decided already and ruled on again: the same ruling (same person, choice and
reason) is answered with the decision taken, a 200 that writes nothing; another reason or
another person is a 409 saying who decided it, with which choice and reason, and nothing is
written. The same choice with another reason was a 200 whose reason the journal never kept.
Six posts at once, each with its own reason, give one decision and five 409s, each naming it,
whichever check of the later ruling met the first one's decision (its claim settled by it, or
the decision's version taken)."""

from __future__ import annotations

import re
import threading

import pytest
from django.db import connections
from django.test import Client

from dashboard.models import ApiToken
from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime.events import ConflictResolved
from services import review
from tests.dashboard.conftest import make_user
from tests.dashboard.test_api import parked_conflict

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("recorded_runs")]

DECIDED = (
    "conflict c-1 has already been decided by reviewer, who chose 'refunded' (claim k1) "
    "for the reason 'the bank confirms the refund'"
)


def client(token: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}")


def decisions(conflict: str) -> list[ConflictResolved]:
    return [
        r.event
        for r in DjangoJournal().read(f"conflict-{conflict}")
        if isinstance(r.event, ConflictResolved)
    ]


def resolve(api: Client, conflict: str, reason: str, choice: str = "k1"):
    body = {"choice": choice, "reason": reason}
    return api.post(f"/api/review/conflicts/{conflict}/resolve", body, "application/json")


def test_the_same_choice_with_another_reason_is_a_409_naming_the_decision(token, done_run):
    conflict = parked_conflict(done_run)
    api = client(token)
    assert resolve(api, conflict, "the bank confirms the refund").status_code == 200
    written = StoredEvent.objects.count()
    again = resolve(api, conflict, "the bank confirms the refund")
    assert again.status_code == 200  # the same ruling: the decision taken, once
    other = resolve(api, conflict, "the customer called")
    assert other.status_code == 409, other.content
    assert other.json() == {"detail": DECIDED}
    assert StoredEvent.objects.count() == written
    [decided] = decisions(conflict)
    assert decided.reason == "the bank confirms the refund"


def test_another_person_with_the_same_choice_and_reason_is_a_409(token, done_run):
    conflict = parked_conflict(done_run)
    assert resolve(client(token), conflict, "the bank confirms the refund").status_code == 200
    written = StoredEvent.objects.count()
    second = ApiToken.issue(make_user("bob", decide=True), "tests")[1]
    other = resolve(client(second), conflict, "the bank confirms the refund")
    assert other.status_code == 409 and other.json() == {"detail": DECIDED}
    assert StoredEvent.objects.count() == written
    assert [d.by for d in decisions(conflict)] == ["reviewer"]


def test_six_rulings_at_once_with_their_own_reasons_decide_once(token, done_run):
    conflict = parked_conflict(done_run)
    barrier, answers = threading.Barrier(6), []

    def post(reason: str) -> None:
        try:
            barrier.wait()
            answer = resolve(client(token), conflict, reason)
            answers.append((answer.status_code, answer.json(), reason))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=post, args=(f"reason {i}",)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(code for code, _, _ in answers) == [200, 409, 409, 409, 409, 409]
    [decided] = decisions(conflict)
    [won] = [reason for code, _, reason in answers if code == 200]
    assert decided.reason == won
    for code, body, _ in answers:
        if code == 409:
            assert body["detail"].endswith(f"for the reason {won!r}"), body


@pytest.mark.parametrize("window", ["unsettled", "decide"])
def test_a_ruling_decided_by_another_while_under_way_names_that_decision(
    token, done_run, monkeypatch, window
):
    """The second ruling read the conflict open; the first went in before its claims check
    (which then found claim k1 settled) or before its write (version 2 taken). Both are told
    the decision taken, not that the claim was settled "since this conflict was parked"."""
    conflict = parked_conflict(done_run)
    real, pending = getattr(review, window), [True]

    def first_goes_in(*args, **kwargs):
        if pending and pending.pop():
            review.resolve(conflict, "k1", "reviewer", "the bank confirms the refund")
        return real(*args, **kwargs)

    monkeypatch.setattr(review, window, first_goes_in)
    written = StoredEvent.objects.count()
    second = resolve(client(token), conflict, "the customer called")
    assert second.status_code == 409, second.content
    assert second.json() == {"detail": DECIDED}
    [decided] = decisions(conflict)
    assert decided.reason == "the bank confirms the refund"
    # the first ruling's decision, its claims' settlement and the note of the live claims
    # after it; nothing of the second's
    assert StoredEvent.objects.count() == written + 3


def test_the_pages_form_sent_again_with_another_reason_says_what_was_taken(as_reviewer, done_run):
    conflict = parked_conflict(done_run)
    page = as_reviewer.get("/review/conflicts").content.decode()
    [ruling_id] = re.findall(r'name="ruling_id" value="(rl-[0-9a-f]+)"', page)
    form = {"choice": "k1", "reason": "the bank confirms the refund", "ruling_id": ruling_id}
    url = f"/review/conflicts/{conflict}/resolve"
    assert as_reviewer.post(url, form, HTTP_HX_REQUEST="true").status_code == 200
    other = as_reviewer.post(url, {**form, "reason": "typo"}, HTTP_HX_REQUEST="true")
    assert other.status_code == 409
    said = other.content.decode().replace("&#x27;", "'")
    assert "(idempotency)" in said and DECIDED.replace("has already been", "was") in said
    [decided] = decisions(conflict)
    assert decided.reason == "the bank confirms the refund"
