"""A tag the run has already (in other capitals, say) and a Tag button pressed on a blank box
are said, on the page and in the API, where the page came back unchanged without a word."""

from __future__ import annotations

import pytest

from journal_store.models import StoredEvent
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def tagged(owner):
    run_id = run_of("premature-done")
    return run_id


def test_the_page_says_a_tag_in_other_capitals_is_there_already(as_owner, tagged):
    as_owner.post(f"/runs/{tagged}/tags", {"add": "nightly"})
    before = StoredEvent.objects.count()
    page = as_owner.post(f"/runs/{tagged}/tags", {"add": "Nightly"}, follow=True)
    assert "Already tagged nightly." in page.content.decode()
    assert StoredEvent.objects.count() == before


def test_the_page_says_a_blank_tag_added_nothing(as_owner, tagged):
    before = StoredEvent.objects.count()
    page = as_owner.post(f"/runs/{tagged}/tags", {"add": "  "}, follow=True)
    assert "No tag was added: the box was blank" in page.content.decode()
    assert StoredEvent.objects.count() == before


def test_the_api_says_what_was_so_already(as_owner, tagged):
    url = f"/api/runs/{tagged}/tags"
    as_owner.post(url, {"add": ["nightly"]}, content_type="application/json")
    answer = as_owner.post(url, {"add": ["NIGHTLY", "parser"]}, content_type="application/json")
    assert answer.json() == {"tags": ["nightly", "parser"], "unchanged": ["already tagged nightly"]}
    blank = as_owner.post(url, {"add": [" "]}, content_type="application/json")
    [problem] = blank.json()["detail"]
    assert blank.status_code == 422 and problem["loc"] == ["body", "add"]
    assert problem["msg"].startswith("'' is not a tag")
