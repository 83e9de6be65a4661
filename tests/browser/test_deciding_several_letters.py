"""A reviewer ticks two of three dead letters, says why once and retries them: the page is
drawn again saying what became of them, the third still open, the navigation's count down."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import parked_letter, readme_shot, shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_two_letters_ticked_are_retried_with_one_reason(signed_in, watch):
    page = signed_in
    runs = ("r-5e7e0a1e0001", "r-5e7e0a1e0002", "r-5e7e0a1e0003")
    ids = [parked_letter(run_id) for run_id in runs]
    page.goto("/review/dead-letters")
    expect(page.locator("#waiting-letters")).to_have_text("(open: 3)")
    several = page.get_by_role("form", name="Decide several at once")
    expect(several.get_by_text("every open letter on this page (3)")).to_be_visible()
    for letter_id in ids[:2]:
        card = page.locator("section.card", has_text=letter_id)
        card.get_by_label("choose for a decision on several (above)").check()
    several.get_by_label("Why").fill("the reviewer is back")
    readme_shot(page, "dead-letters-several", full_page=True)
    several.get_by_role("button", name="Retry the chosen").click()

    said = page.get_by_role("alert")
    expect(said).to_have_text(f"2 dead letters retried: {ids[1]}, {ids[0]}.")
    expect(page.locator("#waiting-letters")).to_have_text("(open: 1)")
    # One letter left: its own card decides it, and the form for several is gone.
    expect(page.get_by_role("form", name="Decide several at once")).to_have_count(0)
    expect(page.locator("section.card", has_text=ids[2]).locator("h2 .badge")).to_have_text("open")
    shoot(page, "dead-letters-several-decided")
    watch.assert_clean()
