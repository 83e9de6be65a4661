"""A request this person may not make, or no longer can, is answered with a sentence saying
why, never Django's bare "403 Forbidden" nor a sign-in page for htmx to swap into a card; and
nothing is written."""

from __future__ import annotations

import pytest
from django.test import Client

from services import runs
from tests.dashboard.conftest import client_for, run_of

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_CURRENT_URL": "http://testserver/review/dead-letters"}


@pytest.fixture
def letter(owner) -> str:
    return f"{run_of('silent-dropout')}:1"


def test_a_decision_without_the_permission_says_which_permission(as_outsider, letter):
    plain = as_outsider.post(f"/review/dead-letters/{letter}/retry", {"reason": "let me"})
    assert plain.status_code == 403
    assert "needs the reviewer permission" in plain.content.decode()
    assert 'aria-label="Main"' in plain.content.decode()  # a page, with the way on
    swapped = as_outsider.post(f"/review/dead-letters/{letter}/retry", {"reason": "x"}, **HTMX)
    assert swapped.status_code == 403
    assert "needs the reviewer permission" in swapped.content.decode()
    assert "<html" not in swapped.content.decode()  # the sentence, for the card
    assert runs.status_of(letter.split(":")[0]) == "dead-lettered"


def test_htmx_swaps_a_403_in_where_the_button_was(as_owner):
    page = as_owner.get("/").content.decode()
    assert '"(400|403|409|413|422|429|503)", "swap": true' in page


def test_a_form_posted_with_a_stale_token_says_to_reload(owner, letter):
    strict = client_for(owner, enforce_csrf_checks=True)
    for extra in ({}, HTMX):
        response = strict.post(f"/review/dead-letters/{letter}/retry", {"reason": "x"}, **extra)
        assert response.status_code == 403
        assert "reload the page and try again" in response.content.decode()
    assert runs.status_of(letter.split(":")[0]) == "dead-lettered"


def test_an_htmx_request_of_a_page_signed_out_sends_the_page_to_sign_in(letter):
    response = Client().post(f"/review/dead-letters/{letter}/retry", {"reason": "x"}, **HTMX)
    # Not the sign-in page for htmx to put in the card, and not back to the button's address
    # (a GET of it is a 405): the page, whole, to the form, and back to itself after.
    assert response.status_code == 200
    assert response["HX-Redirect"] == "/login?next=%2Freview%2Fdead-letters"
    poll = Client().get("/runs/r-000000000000/header", HTTP_HX_REQUEST="true")
    assert poll["HX-Redirect"] == "/login?next=%2F"  # no page named: the runs list
    plain = Client().get("/review/dead-letters")
    assert plain.status_code == 302  # a whole page asked for is redirected as ever
    assert runs.status_of(letter.split(":")[0]) == "dead-lettered"
