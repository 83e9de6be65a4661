"""The metrics page's tables fit their cards at 1280 px: no table scrolls sideways inside its
box (short headings, each with its full name in a title; headings wrap between words)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import expect

from journal_store import projection
from runtime.jsonl import JsonlJournal
from runtime.metrics import TITLES
from tests.browser.conftest import WIDE, shoot
from tests.journal_store.test_projection_matches_views import store

LAPTOP = {"width": 1024, "height": 768}
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "journals"
pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_every_metrics_table_fits_its_box_at_1280_px(signed_in, flown_run):
    # Teams with long names, stored as the workers store them (an import takes no desk run).
    for name in ("support-desk.v1.jsonl", "support-triage.v1.jsonl"):
        store("default", JsonlJournal(FIXTURES / name).read_all())
    projection.catch_up()
    page = signed_in
    page.set_viewport_size(WIDE)
    page.goto("/metrics")
    wraps = page.locator("main .table-wrap")
    expect(wraps).to_have_count(5)
    expect(page.locator("main table tbody tr th", has_text="support-triage").first).to_be_visible()
    sizes = page.eval_on_selector_all(
        "main .table-wrap",
        "els => els.map(e => [e.querySelector('caption').textContent, e.scrollWidth, e.clientWidth,"
        " e.querySelector('table').scrollWidth, e.querySelector('table').clientWidth])",
    )
    wider = [s for s in sizes if s[1] > s[2] or s[3] > s[4]]
    shoot(page, "metrics-tables-1280")
    assert not wider, wider
    # A short heading keeps its full name, for the pointer and the screen reader: the name
    # the run's Metrics tab heads its row with.
    deadlock = TITLES["deadlock_rate"]
    heading = page.get_by_role("columnheader", name=deadlock.short, exact=True)
    expect(heading.locator("abbr")).to_have_attribute("title", deadlock.full)


def test_a_runs_metrics_tab_fits_its_box_on_a_laptop(signed_in, flown_run):
    # The "From" column's lines are monospace and did not wrap: at 1,024 px the first
    # flight's `coordinating_agents operator, orchestrator, reviewer, tester` made the table
    # scroll sideways inside its card (at 1,280 it fitted, by a few pixels).
    page = signed_in
    page.set_viewport_size(LAPTOP)
    page.goto(f"/runs/{flown_run}/")
    page.get_by_role("tab", name="Metrics").click()
    wrap = page.locator("main .table-wrap", has=page.locator("table.metrics"))
    expect(wrap).to_contain_text("coordinating_agents operator, orchestrator, reviewer, tester")
    width = wrap.evaluate("e => [e.scrollWidth, e.clientWidth]")
    shoot(page, "run-metrics-tab-1024")
    assert width[0] <= width[1], width
