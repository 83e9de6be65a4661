"""A button pressed by someone who may no longer press it says why where it was pressed: the
reviewer permission taken away while the queue was open (htmx dropped the 403, and Retry did
nothing), or a session that ended (htmx put the sign-in page inside the card, and signing in
there went on to the button's address as a GET)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import PASSWORD, log_in, parked_letter, shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

RUN = "r-5e1f0ffe1001"


@pytest.fixture
def letter(transactional_db) -> str:
    return parked_letter(RUN)


@pytest.fixture
def sam(transactional_db):
    """A reviewer by the permission alone (a superuser's cannot be taken away)."""
    from django.contrib.auth.models import Permission, User

    user = User.objects.create_user("sam", "sam@example.org", PASSWORD)
    user.user_permissions.add(Permission.objects.get(codename="decide"))
    return user


def open_letter(page, letter: str):
    page.goto("/review/dead-letters")
    card = page.locator("section.card", has_text=letter)
    retry = card.locator("form", has=page.get_by_role("button", name="Retry"))
    retry.get_by_label("Why retry").fill("try once more")
    return card, retry


def test_a_reviewer_whose_permission_was_taken_away_is_told_in_the_card(page, sam, letter, watch):
    log_in(page, "sam")
    card, retry = open_letter(page, letter)
    sam.user_permissions.clear()
    retry.get_by_role("button", name="Retry").click()
    expect(card).to_contain_text("deciding on review items needs the reviewer permission")
    expect(page.get_by_role("navigation", name="Main")).to_have_count(1)  # no page in a page
    expect(card.locator("h2 .badge")).to_have_text("open")  # and nothing was decided
    shoot(page, "decision-without-the-permission")


def test_a_page_whose_session_ended_signs_in_again_and_comes_back(page, sam, letter, watch):
    log_in(page, "sam")
    _, retry = open_letter(page, letter)
    page.context.clear_cookies(name="sessionid")
    retry.get_by_role("button", name="Retry").click()
    expect(page).to_have_url(re.compile(r"/login\?next=%2Freview%2Fdead-letters$"))
    expect(page.get_by_role("navigation", name="Main")).to_have_count(1)
    page.get_by_label("Username").fill("sam")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(re.compile(r"/review/dead-letters$"))
    expect(page.locator("section.card", has_text=letter).locator("h2 .badge")).to_have_text("open")
