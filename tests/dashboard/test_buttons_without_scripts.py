"""With scripts off, a button's form is posted plainly and its answer is a whole page: a
refusal, or what a replay check found, is said on a page with the navigation and a link back
to where the button was (the run, the queue), with the refusal's status, where it came as a
bare fragment with no page around it. With htmx, the same sentence comes as the fragment the
page swaps in."""

from __future__ import annotations

import pytest

from journal_store import projection
from journal_store.models import DeadLetter
from tests.dashboard.conftest import run_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]
HTMX = {"HTTP_HX_REQUEST": "true"}


def whole_page(response, back: str) -> str:
    page = response.content.decode()
    assert page.lstrip().lower().startswith("<!doctype html")
    assert 'href="/" >Runs</a>' in page  # the navigation, as on every page
    assert f'<a href="{back}">Back to ' in page
    return page


def test_a_refused_stop_of_a_finished_run_is_a_whole_page(as_owner, done_run):
    response = as_owner.post(f"/runs/{done_run}/interrupt", {"reason": "too late"})

    assert response.status_code == 409
    page = whole_page(response, f"/runs/{done_run}/")
    assert f"run {done_run} has already finished" in page

    fragment = as_owner.post(f"/runs/{done_run}/interrupt", {"reason": "x"}, **HTMX)
    assert fragment.status_code == 409
    assert fragment.content.decode().startswith('<p class="message error"')


def test_a_replay_check_is_a_whole_page(as_owner, done_run):
    response = as_owner.post(f"/runs/{done_run}/replay")

    assert response.status_code == 200
    page = whole_page(response, f"/runs/{done_run}/")
    assert '<p class="message ok" role="alert" hx-disable>identical: all' in page


def test_a_refused_decision_on_a_letter_is_a_whole_page(as_reviewer, nowhere):
    run_id = run_of("silent-dropout", by="reviewer")
    projection.catch_up()
    letter_id = DeadLetter.objects.get(run_id=run_id, status="open").letter_id

    response = as_reviewer.post(f"/review/dead-letters/{letter_id}/retry", {"reason": ""})

    assert response.status_code == 400
    page = whole_page(response, "/review/dead-letters")
    assert "say why: the reason is recorded in the audit trail" in page
    assert DeadLetter.objects.get(letter_id=letter_id).status == "open"  # nothing decided
