"""On a phone (390 px) the runs list is a list of cards, and a run's bill, audit and tabs fit:
nothing scrolls sideways, neither the page nor a table inside it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import NARROW, WIDE, overflow, shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Every table box on the page that is wider inside than it shows (it would scroll sideways).
SCROLLING_TABLES = """
[...document.querySelectorAll('.table-wrap')]
  .filter((w) => w.scrollWidth - w.clientWidth > 1)
  .map((w) => (w.querySelector('caption') || w).textContent.trim() + ': ' +
               (w.scrollWidth - w.clientWidth) + ' px')
"""
# Every visible element of `selector` that reaches past the window's right edge.
PAST_THE_EDGE = """
(selector) => [...document.querySelectorAll(selector)]
  .filter((e) => e.getClientRects().length && e.getBoundingClientRect().right > window.innerWidth + 1)
  .map((e) => e.textContent.trim().slice(0, 40))
"""


def box(locator):
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not shown"
    return found


def test_at_390_px_the_runs_list_is_one_card_per_run_that_fits_the_window(
    signed_in, flown_run, watch
):
    page = signed_in
    page.set_viewport_size(NARROW)
    page.goto("/")
    row = page.locator(f"#row-{flown_run}")
    expect(row.get_by_role("link", name=flown_run)).to_be_visible()
    shoot(page, "runs-cards-390")

    assert overflow(page) <= 1
    assert page.evaluate(SCROLLING_TABLES) == []
    # A card: the column headings are gone from view and each value carries its own label;
    # the status, the id and the findings lead, the task reads below them across the card.
    expect(page.locator("table.runs thead")).not_to_be_in_viewport()
    status, run_id = box(row.locator("td.status")), box(row.locator("td.run-id"))
    task = box(row.locator("td.task"))
    assert abs(status["y"] - run_id["y"]) < status["height"], "status and id share a line"
    assert task["y"] >= run_id["y"] + run_id["height"] - 1, "the task reads below the id"
    assert task["width"] > 0.8 * (box(row)["width"] - 24), "the task spans the card"
    tokens = row.locator("td[data-label='Tokens']")
    expect(tokens).to_be_visible()
    assert (
        page.evaluate("(e) => getComputedStyle(e, '::before').content", tokens.element_handle())
        == '"Tokens "'
    )
    assert page.evaluate(PAST_THE_EDGE, "table.runs td") == []
    assert box(row)["width"] <= NARROW["width"]
    watch.assert_clean()


def test_at_1280_px_the_runs_list_stays_a_table_with_its_headings(signed_in, flown_run):
    page = signed_in
    page.set_viewport_size(WIDE)
    page.goto("/")
    expect(page.locator("table.runs thead")).to_be_in_viewport()
    row = page.locator(f"#row-{flown_run}")
    status, task = box(row.locator("td.status")), box(row.locator("td.task"))
    assert abs(status["y"] - task["y"]) < 2, "one line per run"


def test_at_390_px_a_runs_bill_audit_and_tabs_fit_without_scrolling_sideways(
    signed_in, flown_run, watch
):
    page = signed_in
    page.set_viewport_size(NARROW)
    page.goto(f"/runs/{flown_run}/?tab=bill")
    bill = page.get_by_role("tabpanel")
    expect(bill.locator("svg.chart")).to_be_visible()
    shoot(page, "run-bill-cards-390")
    assert overflow(page) <= 1
    assert page.evaluate(SCROLLING_TABLES) == []
    # Every column of the bill per agent is on screen, labelled: none is cut off.
    coder = bill.locator("table.cards tbody tr", has=page.locator("th", has_text="coder")).first
    for label in ("Model", "Tokens", "In", "Out", "Calls", "Share", "Cost", "Budget", "Remaining"):
        cell = coder.locator(f"td[data-label='{label}']")
        expect(cell).to_be_visible()
        assert box(cell)["x"] >= 0 and box(cell)["x"] + box(cell)["width"] <= NARROW["width"]
    assert page.evaluate(PAST_THE_EDGE, "#tab td, #tab th, #tab p") == []

    # The tabs all show, each reachable by a tap, and switch in place.
    tabs = page.get_by_role("tab")
    for i in range(tabs.count()):
        expect(tabs.nth(i)).to_be_in_viewport(ratio=1)
    assert page.evaluate(PAST_THE_EDGE, "nav.tabs a") == []
    page.get_by_role("tab", name="Audit").click()
    expect(page.get_by_role("tab", name="Audit")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#tab tbody tr").first).to_be_visible()
    shoot(page, "run-audit-cards-390")
    assert overflow(page) <= 1
    assert page.evaluate(SCROLLING_TABLES) == []
    watch.assert_clean()
