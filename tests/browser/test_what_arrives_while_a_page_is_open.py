"""What arrives while a page is open is announced by the page's poll, and one click shows it:
a run started from the API, a command or another tab, on the runs list (under its own filter:
a run the filter does not select is not announced); a conflict parked, on the conflicts queue.
Until now they appeared only on a reload."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from journal_store.journal import DjangoJournal
from runtime.events import TeamStarted
from tests.browser.conftest import parked_letter, settled, shoot
from tests.dashboard.polls import park

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def start_elsewhere(run_id: str, team: str) -> None:
    """A run started the way a command starts one: its first event in the journal, nothing
    told to the page."""
    event = TeamStarted(run_id=run_id, team=team, scenario="", task=f"started elsewhere: {run_id}")
    DjangoJournal().append(f"run-{run_id}", [event], 0)


def next_poll(page):
    """The answer to the runs list's next poll for newer runs (one every 5 s), from the poll
    that asks now (the list's own, or the one an answer brought): matched by its address, so
    that an answer already on its way to a poll the page dropped is not taken for it."""
    asks = page.evaluate(
        "(document.querySelector('#newer-runs span[hx-get]')"
        " || document.querySelector('#newer-runs')).getAttribute('hx-get')"
    )
    with page.expect_response(lambda answer: answer.url.endswith(asks), timeout=10_000) as got:
        pass
    return got.value


def test_a_run_started_elsewhere_is_announced_and_shown_on_a_click(signed_in, watch):
    page = signed_in
    start_elsewhere("r-0000000000a1", team="solo")
    page.goto("/?team=solo")
    expect(page.locator("#row-r-0000000000a1")).to_be_visible()
    settled(page)
    banner = page.locator("#newer-runs")
    expect(banner).to_be_empty()

    start_elsewhere("r-0000000000b2", team="repo-fix")  # not the list's team
    start_elsewhere("r-0000000000c3", team="solo")
    announced = banner.get_by_role("link", name=re.compile("started since this list was drawn"))
    expect(announced).to_have_text(
        "1 run started since this list was drawn: show it", timeout=15_000
    )
    assert banner.get_attribute("aria-live") == "polite"
    expect(page).to_have_title("(1) Runs · Minutes")  # a tab in the background says it too
    shoot(page, "runs-newer")
    # Said once: the polls that follow answer 204 while the count stays, so the sentence is
    # the same element a poll later (a screen reader does not hear it again every 5 s).
    page.evaluate("document.querySelector('#newer-runs p.newer').dataset.seen = 'yes'")
    assert next_poll(page).status == 204
    assert page.evaluate("document.querySelector('#newer-runs p.newer').dataset.seen") == "yes"
    start_elsewhere("r-0000000000d4", team="solo")
    expect(announced).to_have_text(
        "2 runs started since this list was drawn: show them", timeout=15_000
    )
    announced.click()
    expect(page.locator("#row-r-0000000000d4")).to_be_visible()
    expect(page.locator("#row-r-0000000000c3")).to_be_visible()
    expect(page).to_have_title("Runs · Minutes")
    expect(page.locator("#row-r-0000000000b2")).to_have_count(0)
    expect(page).to_have_url(re.compile(r"/\?team=solo$"))
    expect(page.locator("#team")).to_have_value("solo")
    # The list drawn again counts from its own newest run: nothing is announced any more.
    assert next_poll(page).status == 204
    expect(page.locator("#newer-runs")).to_be_empty()
    watch.assert_clean()


def test_a_conflict_parked_while_the_queue_is_open_is_announced(signed_in, watch):
    page = signed_in
    page.goto("/review/conflicts")
    settled(page)
    banner = page.locator("#newer-items")
    expect(banner).to_be_empty()
    park("r-0000000000d4", "cf-0000000000d4")
    announced = banner.get_by_role("link")
    expect(announced).to_have_text(
        "1 new conflict since this page was drawn: show it", timeout=15_000
    )
    announced.click()
    expect(page.locator("#cf-0000000000d4")).to_be_visible()
    watch.assert_clean()


def test_the_navigation_counts_down_as_the_reviewer_decides(signed_in, watch):
    page = signed_in
    for run_id in ("r-5e1f0ffe10a1", "r-5e1f0ffe10b2"):
        parked_letter(run_id)
    page.goto("/review/dead-letters")
    count = page.locator("#waiting-letters")
    expect(count).to_have_text("(open: 2)")
    card = page.locator("section.card", has_text="r-5e1f0ffe10a1:1")
    discard = card.locator("form", has=page.get_by_role("button", name="Discard"))
    discard.get_by_label("Why discard").fill("not needed")
    discard.get_by_role("button", name="Discard").click()
    expect(card.locator("h2 .badge")).to_have_text("discarded")
    expect(count).to_have_text("(open: 1)")  # without a reload
    watch.assert_clean()
