"""A run ended by a person's discard of its dead letter (a step that kept failing) replays
identical up to that verdict, which the page, the API and the command line say a person wrote;
"Check replay" said it differed at the verdict, which no replay can write."""

from __future__ import annotations

import pytest
from django.test import Client

from journal_store import projection
from services import letters
from services.control import Control
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def discarded():
    run_id = run_of("first-flight", steps=1)
    letter = Control(run_id).dead_letter("a step kept failing", 3, "Boom: no")
    letters.decide_letter(letter.letter_id, "discard", "rosa", "not worth it")
    projection.catch_up()
    return run_id


def test_the_page_and_the_api_say_it_replays_and_who_ended_it(as_owner, token, discarded):
    page = as_owner.post(f"/runs/{discarded}/replay", HTTP_HX_REQUEST="true").content.decode()
    assert "identical: all" in page and "differs" not in page
    assert "then a person ended it (discarded by rosa: not worth it)" in page
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    answer = api.post(f"/api/runs/{discarded}/replay").json()
    assert answer["identical"] is True and answer["difference"] == ""
    assert answer["ended_by"] == "discarded by rosa: not worth it"
