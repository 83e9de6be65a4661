"""The metrics page in a real browser: from the nav to the four SVG plots, each an image with
its own accessible name; a filter chosen in the form lands in the URL; a run's metrics tab."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from runtime.metrics import TITLES
from tests.browser.conftest import import_text, readme_shot, shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_the_metrics_page_shows_its_plots_and_keeps_its_filters_in_the_url(
    signed_in, flown_run, journal_of
):
    for days in (1, 2, 4):  # the same flight, started days earlier: points over time

        def earlier(event: dict, days: int = days) -> None:
            if event.get("t"):
                event["t"] -= days * 86_400

        import_text(journal_of(f"r-{days}-days-ago", earlier), name=f"{days}.jsonl")
    page = signed_in
    page.goto("/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Metrics").click()
    expect(page).to_have_url(re.compile(r"/metrics$"))
    plots = page.locator("svg.chart[role=img]")
    expect(plots).to_have_count(4)
    for name in (
        "Spend per verified success",
        "Coordination overhead ratio per team",
        "Conflict and dead-letter rates per team",
        "Time waiting for people",
    ):
        expect(page.get_by_role("img", name=re.compile(name))).to_be_visible()
    expect(page.locator("section.card table").first).to_contain_text("Runs")
    expect(page.locator("svg.chart circle.chart-dot")).to_have_count(4)
    shoot(page, "metrics")
    readme_shot(page, "metrics", full_page=True)  # its four plots
    page.locator("#m-team").select_option("repo-fix")
    page.get_by_role("button", name="Show").click()
    expect(page).to_have_url(re.compile(r"/metrics\?team=repo-fix"))
    expect(page.get_by_role("img", name=re.compile("overhead ratio"))).to_be_visible()
    page.goto("/metrics?since=2026-13-45")
    expect(page.locator("#m-since-error")).to_contain_text("is not a date")
    expect(page.locator("svg.chart")).to_have_count(0)
    page.goto(f"/runs/{flown_run}/")
    page.get_by_role("tab", name="Metrics").click()
    latency = page.locator("#metric-conflict_resolution_latency")
    expect(latency).to_contain_text("Not known")
    # Headed by its name in words, its key beneath it (as /metrics and the API call it).
    heading = latency.get_by_role("rowheader")
    expect(heading).to_contain_text(TITLES["conflict_resolution_latency"].full)
    expect(heading.locator("code")).to_have_text("conflict_resolution_latency")
    shoot(page, "run-metrics-tab")
