"""A reviewer ticks two of three dead letters, says why once and retries them: the page is
drawn again saying what became of them, the third still open, the navigation's count down."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils.timezone import now
from playwright.sync_api import expect

from journal_store.models import DeadLetter
from tests.browser.conftest import parked_letter, readme_shot, settled, shoot

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


def test_letters_decided_one_by_one_leave_the_rest_of_the_page_true(signed_in, watch):
    """Each decided in its own card, in place: the line naming the oldest open letter and the
    decision on several went on naming and counting the letters just decided."""
    page = signed_in
    runs = ("r-5e7e0a1e0011", "r-5e7e0a1e0012", "r-5e7e0a1e0013")
    ids = [parked_letter(run_id) for run_id in runs]
    for days, letter_id in enumerate(reversed(ids), start=1):  # the first is the oldest
        DeadLetter.objects.filter(pk=letter_id).update(created_at=now() - timedelta(days=days))
    page.goto("/review/dead-letters")
    oldest = page.locator("#oldest-open")
    expect(oldest.get_by_role("link", name=ids[0])).to_be_visible()
    several = page.get_by_role("form", name="Decide several at once")
    several.get_by_label("Why").fill("typed before deciding one alone")

    card = page.locator("section.card", has_text=ids[0])
    card.get_by_label("Why retry").fill("the reviewer is back")
    card.get_by_role("button", name="Retry").click()
    expect(card.get_by_role("status")).to_contain_text(f"retry recorded for {ids[0]}")
    settled(page)
    expect(oldest).to_contain_text("has waited 2\xa0days")
    expect(oldest.get_by_role("link", name=ids[1])).to_be_visible()
    expect(several.get_by_text("every open letter on this page (2)")).to_be_visible()
    listed = several.evaluate("f => new FormData(f).getAll('listed')")
    assert sorted(listed) == sorted(ids[1:])
    expect(several.get_by_label("Why")).to_have_value("typed before deciding one alone")

    card = page.locator("section.card", has_text=ids[2])
    card.get_by_label("Why discard").fill("obsolete work")
    card.get_by_role("button", name="Discard").click()
    expect(card.get_by_role("status")).to_contain_text(f"discard recorded for {ids[2]}")
    settled(page)
    # One letter left: its card says how long it has waited; nothing decides several.
    expect(oldest).to_have_count(0)
    expect(page.get_by_role("form", name="Decide several at once")).to_have_count(0)
    expect(page.get_by_label("choose for a decision on several (above)")).to_have_count(0)

    card = page.locator("section.card", has_text=ids[1])
    card.get_by_label("Why retry").fill("the last one")
    card.get_by_role("button", name="Retry").click()
    expect(card.locator("h2 .badge")).to_have_text("retried")
    expect(page.locator("#waiting-letters")).to_have_text("")
    shoot(page, "dead-letters-decided-one-by-one")
    watch.assert_clean()
