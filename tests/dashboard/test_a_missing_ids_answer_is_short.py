"""A run or an intent nobody has, asked for by an id of thousands of characters, is answered 404
naming the id cut short, on the API and the run's page: the answer quoted the whole path back.
A short plain id is still named as it is."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

LONG = "r-" + "9" * 5_000


@pytest.mark.parametrize("path", [f"/api/runs/{LONG}", f"/api/runs/{LONG}/bill"])
def test_a_long_run_id_is_named_short_in_the_apis_404(api, path):
    answer = api.get(path)
    assert answer.status_code == 404
    detail = answer.json()["detail"]
    assert detail.startswith("no run 'r-999") and detail.endswith("…'") and len(detail) < 80


def test_a_long_intent_id_is_named_short_in_the_apis_404(api):
    answer = api.get("/api/intents/task-" + "9" * 5_000)
    assert answer.status_code == 404
    assert len(answer.json()["detail"]) < 200


def test_a_short_missing_run_is_still_named_as_it_is(api, as_reviewer):
    assert api.get("/api/runs/r-nobody").json()["detail"] == "no run r-nobody"
    page = as_reviewer.get(f"/runs/{LONG}/")
    assert page.status_code == 404 and LONG not in page.content.decode()
