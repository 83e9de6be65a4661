"""A finished run's page: every tab opens in place and shows its content, and the pages fit
a desktop and a phone without scrolling sideways."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from journal_store.models import RunSummary
from tests.browser.conftest import NARROW, TABS_SHOWN, WIDE, overflow, readme_shot, shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_every_tab_of_a_run_opens_in_place_and_shows_its_content(signed_in, flown_run, watch):
    run = RunSummary.objects.get(run_id=flown_run)
    page = signed_in
    page.goto(f"/runs/{flown_run}/")
    expect(page.locator("#run-header h1 > span.badge").first).to_have_text("done")
    page.evaluate("window.__sameDocument = true")

    def open_tab(name: str) -> None:
        tab = page.get_by_role("tab", name=name.capitalize())
        tab.click()
        expect(tab).to_have_attribute("aria-selected", "true")
        expect(page).to_have_url(re.compile(rf"/runs/{flown_run}/\?tab={name}$"))
        expect(page.get_by_role("tabpanel")).to_have_attribute("aria-labelledby", f"tab-{name}")

    open_tab("threads")
    lanes = page.locator("#tab section.lane")
    expect(lanes).to_have_count(3)  # plan, T1 (fix and review), T3 (the suite)
    expect(page.locator("#tab .badge.REQUEST").first).to_have_text("REQUEST")
    expect(page.locator("#tab .badge.ACCEPT")).to_have_text("ACCEPT")
    expect(page.locator("#tab .badge.DONE").first).to_be_visible()
    expect(lanes.nth(1)).to_contain_text("reviewer → orchestrator")
    shoot(page, "run-threads-1280")

    open_tab("bill")
    chart = page.locator("#tab svg.chart")
    expect(chart).to_be_visible()
    expect(chart.locator("rect.chart-bar")).to_have_count(4)
    for agent in ("orchestrator", "coder", "reviewer", "tester"):
        expect(chart.locator("text.chart-label", has_text=agent)).to_have_count(1)
    expect(page.locator("#tab")).to_contain_text(f"spent {run.spent}")
    expect(page.locator("#tab")).not_to_contain_text("the ledger and the usage disagree")
    shoot(page, "run-bill-1280")

    open_tab("audit")
    audit = page.locator("#tab table tbody")
    expect(audit.locator("tr", has=page.locator(".badge.ACCEPT"))).to_contain_text("reviewer")
    expect(audit).to_contain_text("relied on reviewer's ACCEPT m-005")
    expect(audit.locator(".badge", has_text="TeamFinished:done")).to_be_visible()
    shoot(page, "run-audit-1280")

    open_tab("findings")
    expect(page.locator("#tab")).to_contain_text("No failure signature in this run's journal.")
    shoot(page, "run-findings-1280")

    open_tab("timeline")
    events = page.locator("#events tr.event")
    expect(events).to_have_count(50)
    expect(events.first).to_contain_text("TeamStarted")
    expect(events.first.locator("summary")).to_contain_text("Make the failing parser test pass")
    page.get_by_role("link", name=re.compile(r"^Next 50 events after #")).click()
    expect(events).to_have_count(run.event_count)
    expect(events.last).to_contain_text("TeamFinished")
    events.last.locator("summary").click()
    expect(events.last.locator("pre")).to_contain_text('"status": "done"')
    shoot(page, "run-timeline-1280")

    assert page.evaluate("window.__sameDocument === true"), "a tab reloaded the page"
    watch.assert_clean()


@pytest.mark.parametrize("viewport", [WIDE, NARROW], ids=["1280", "390"])
def test_the_runs_page_and_a_run_page_fit_the_width_of_the_window(
    signed_in, flown_run, viewport, watch
):
    page = signed_in
    width = viewport["width"]
    page.set_viewport_size(viewport)

    page.goto("/")
    expect(page.get_by_role("link", name=flown_run)).to_be_visible()
    shoot(page, f"runs-{width}")
    too_wide = {}
    if overflow(page) > 1:
        too_wide["runs"] = overflow(page)

    for tab, shows in TABS_SHOWN.items():
        page.goto(f"/runs/{flown_run}/?tab={tab}")
        expect(page.locator(shows).first).to_be_visible()
        shoot(page, f"run-{tab}-{width}")
        if overflow(page) > 1:
            too_wide[f"run {tab}"] = overflow(page)

    assert too_wide == {}, f"wider than the {width} px window by (px): {too_wide}"
    watch.assert_clean()


def test_a_triage_run_shows_its_degraded_answer_and_its_specialists(signed_in, fly_team, watch):
    """Flown in-process over the real MCP servers and imported: the page leads with the answer,
    marked degraded, and the timeline holds the three specialists' streams."""
    from tests.browser.conftest import import_text

    flown = fly_team("refund-saga", team="support-triage")
    # The refund's effect ledger is shared between runs (any run computing the same key reads
    # it), so an import does not carry it; the page reads the run's own streams.
    own = [raw for raw in flown.path.read_text().splitlines() if '"stream":"effect-' not in raw]
    import_text("\n".join(own) + "\n", name=flown.path.name)
    page = signed_in
    page.goto(f"/runs/{flown.run_id}/")
    answer = page.get_by_role("region", name="the run's answer")
    expect(answer).to_contain_text("degraded")
    expect(answer).to_contain_text("policy snapshot 2025-05")
    expect(answer).to_contain_text("undone: credit, label")
    expect(answer).not_to_contain_text("KB-999")  # the made-up finding was dropped
    expect(answer).to_contain_text("rests on: orders-worker-1-1")
    expect(page.locator("#events")).to_contain_text("kb-worker")
    shoot(page, "run-answer-1280")
    readme_shot(page, "run-answer")
