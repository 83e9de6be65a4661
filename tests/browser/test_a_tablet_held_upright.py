"""On a tablet held upright (768 px, and the 834 px of a larger iPad) nothing scrolls sideways:
no page a person reaches from the navigation, nor a tab of a run's page, nor any table inside
them. The runs list was 198 px wider than its box at 768 px, the bill 62, a run's Metrics tab
138: the figures a person came for were past the box's edge. The runs list reads as cards
there, every value the table shows still on them."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from journal_store import projection
from journal_store.models import StoredEvent
from runtime.events import ConflictParked
from runtime.jsonl import JsonlJournal
from services import review
from tests.browser.conftest import (
    TABLET,
    TABS_SHOWN,
    import_text,
    parked_letter,
    settled,
    shoot,
    sideways,
)
from tests.browser.test_metrics_tables_fit import FIXTURES
from tests.journal_store.test_projection_matches_views import store

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

UPRIGHT = (TABLET, {"width": 834, "height": 1194})


def fill_the_store(run_id: str, journal_of) -> None:
    """What the pages show when they are full: a second run to compare, a dead letter and a
    conflict waiting, and the desk's and triage team's runs (long team names) on /metrics."""
    import_text(journal_of("r-changed"), name="changed.jsonl")
    parked_letter("r-5ma11de77e12")
    claim = {"run_id": run_id, "based_on": 3}
    review.park(
        ConflictParked(
            run_id=run_id,
            conflict_id="c-parser-owner",
            subject="textparse/parser.py",
            predicate="owner",
            conflict_type="value",
            claims=[
                {**claim, "claim_id": "k1", "value": "coder", "agent": "coder"},
                {**claim, "claim_id": "k2", "value": "reviewer", "agent": "reviewer"},
            ],
        )
    )
    for name in ("support-desk.v1.jsonl", "support-triage.v1.jsonl"):
        store("default", JsonlJournal(FIXTURES / name).read_all())
    projection.catch_up()


def test_no_page_nor_tab_scrolls_sideways_on_a_tablet_held_upright(
    signed_in, flown_run, journal_of, watch
):
    fill_the_store(flown_run, journal_of)
    # A fork after the run's third event (positions are the store's, counted across runs).
    at = StoredEvent.objects.filter(run_id=flown_run).order_by("position")[2].position
    pages = {
        "the runs list": ("/", f"#row-{flown_run}"),
        "the new-run form": ("/runs/new", "main form"),
        "the dead letters": ("/review/dead-letters", "section.card"),
        "the conflicts": ("/review/conflicts", "section.card"),
        "the import page": ("/import", "main form"),
        "search": ("/search?q=parser", "table.cards"),
        "the metrics": ("/metrics", "#definitions"),
        "the comparison": (f"/runs/compare?a={flown_run}&b=r-changed", "#divergence"),
        "the fork form": (f"/runs/{flown_run}/fork?at={at}", "main form"),
    } | {
        f"the {tab} tab": (f"/runs/{flown_run}/?tab={tab}", shown)
        for tab, shown in TABS_SHOWN.items()
    }
    page = signed_in
    found = {}
    for what, (url, shown) in pages.items():
        page.set_viewport_size(UPRIGHT[0])
        page.goto(url)
        expect(page.locator(shown).first).to_be_visible()
        settled(page)
        for size in UPRIGHT:  # the same page, the window turned wider: it lays out again
            page.set_viewport_size(size)
            if wider := sideways(page):
                found[f"{what} at {size['width']} px"] = wider
                shoot(page, f"tablet-{size['width']}-{url.strip('/').split('?')[0] or 'runs'}")
    assert found == {}, "\n".join(f"{where}: {', '.join(what)}" for where, what in found.items())
    watch.assert_clean()


def test_at_768_px_a_run_card_shows_every_value_of_the_wide_table(signed_in, flown_run):
    """The phone's card leaves out the stage; a tablet's has room for every column."""
    page = signed_in
    page.set_viewport_size(UPRIGHT[0])
    page.goto("/")
    row = page.locator(f"#row-{flown_run}")
    expect(row.locator("td.task")).to_be_visible()
    shoot(page, "runs-cards-768")
    expect(page.locator("table.runs thead")).not_to_be_in_viewport()
    for label in ("Team", "Stage", "Tokens", "Cost (USD)", "Started", "Duration", "Findings"):
        expect(row.locator(f"td[data-label='{label}']")).to_be_visible()
    status, task = row.locator("td.status").bounding_box(), row.locator("td.task").bounding_box()
    assert status and task and task["y"] >= status["y"] + status["height"] - 1, "task below"
    assert task["width"] > 0.8 * (row.bounding_box()["width"] - 24), "the task spans the card"


def test_at_768_px_a_runs_header_reads_across_the_card_with_its_buttons_under_it(
    signed_in, flown_run
):
    """Beside the buttons (32rem of the card) the title, status and facts had some 200 px: the
    imported-from line was six lines high."""
    page = signed_in
    page.set_viewport_size(UPRIGHT[0])
    page.goto(f"/runs/{flown_run}/")
    head = page.locator("#run-header .run-head")
    buttons = head.locator(".actions").first
    expect(buttons.get_by_role("link", name="Export JSONL")).to_be_visible()
    card, title, under = (
        head.bounding_box(),
        head.locator("h1").bounding_box(),
        buttons.bounding_box(),
    )
    assert card and title and under
    assert under["y"] >= title["y"] + title["height"], "the buttons are under the title"
    facts = head.locator("dl").first.bounding_box()
    assert facts and facts["width"] > 0.8 * card["width"], "the facts read across the card"
