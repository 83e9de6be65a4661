"""A decision posted for an id that no dead letter or conflict can have (5,000 characters, a
space) is refused before anything is looked up, saying what an id is and quoting it short, on
the pages and in the API: each was answered 404 "no dead letter ..." quoting the whole id."""

from __future__ import annotations

import pytest

from journal_store.models import StoredEvent

pytestmark = pytest.mark.django_db

LONG = "r-1:" + "9" * 5_000


@pytest.mark.parametrize("letter_id", [LONG, "r-1:a b", "r-1", "r-1:1:control:2"])
def test_a_letter_id_of_the_wrong_shape_is_refused_saying_what_one_is(api, as_reviewer, letter_id):
    before = StoredEvent.objects.count()
    answer = api.post(
        f"/api/review/dead-letters/{letter_id}/retry", {"reason": "why"}, "application/json"
    )
    assert answer.status_code == 400
    detail = answer.json()["detail"]
    assert "is not a dead letter's id (its run's id, then ':' and a number" in detail
    assert len(detail) < 200
    page = as_reviewer.post(f"/review/dead-letters/{letter_id}/discard", {"reason": "why"})
    assert page.status_code == 400
    assert "is not a dead letter&#x27;s id" in page.content.decode()
    assert len(page.content) < 10_000
    assert StoredEvent.objects.count() == before


def test_a_conflict_id_longer_than_any_is_refused(api, as_reviewer):
    before = StoredEvent.objects.count()
    body = {"choice": "k1", "reason": "why"}
    url = "/review/conflicts/" + "c" * 5_000 + "/resolve"
    answer = api.post("/api" + url, body, "application/json")
    assert answer.status_code == 400
    detail = answer.json()["detail"]
    assert detail.endswith("is no conflict's id: at most 64 long") and len(detail) < 200
    page = as_reviewer.post(url, body)
    assert page.status_code == 400 and len(page.content) < 10_000
    assert StoredEvent.objects.count() == before
