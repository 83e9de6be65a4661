"""A refused decision says why where it was asked, and the form stays to try again: a reason of
only spaces, and a decision a second tab made first. htmx drops a 4xx answer unless told to
swap it (templates/base.html), and the button then seemed to do nothing; in debug mode
django-htmx's helper replaced the whole page with the one-line message instead."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import parked_letter, shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

RUN = "r-5e1f0ffe1000"


@pytest.fixture
def letter(transactional_db) -> str:
    return parked_letter(RUN)


def test_a_refused_decision_says_why_in_its_card_and_the_form_stays(signed_in, letter, watch):
    page = signed_in
    page.goto("/review/dead-letters")
    card = page.locator("section.card", has_text=letter)
    retry = card.locator("form", has=page.get_by_role("button", name="Retry"))
    retry.get_by_label("Why retry").fill("   ")  # passes the browser's `required`
    retry.get_by_role("button", name="Retry").click()
    expect(retry.locator(".form-error")).to_have_text(
        "say why: the reason is recorded in the audit trail"
    )
    expect(page.get_by_role("navigation", name="Main")).to_be_visible()  # the page is whole
    expect(retry.get_by_label("Why retry")).to_be_visible()  # and the form is still there
    shoot(page, "dead-letter-refused-in-place")

    # A second tab decides first; this one's decision is refused, and says so.
    other = page.context.new_page()
    other.goto("/review/dead-letters")
    first = other.locator("section.card", has_text=letter)
    first.get_by_label("Why discard").fill("the reviewer's process is gone for good")
    first.get_by_role("button", name="Discard").click()
    expect(first.get_by_role("status")).to_contain_text(f"discard recorded for {letter}")
    # Decided in place: the card's status and who decided, its forms gone.
    expect(first.locator("h2 .badge")).to_have_text("discarded")
    expect(first).to_contain_text("the reviewer's process is gone for good")
    expect(first.locator("form")).to_have_count(0)
    retry.get_by_label("Why retry").fill("try once more")
    retry.get_by_role("button", name="Retry").click()
    expect(retry.locator(".form-error")).to_contain_text("already been decided")
    # Chromium logs every 4xx answer to the console; nothing else may have gone wrong.
    refusals = [e for e in watch.errors if "the server responded with a status of 4" in e]
    assert len(refusals) == 2, watch.errors
    assert [e for e in watch.errors if e not in refusals] == [] and watch.dialogs == []
