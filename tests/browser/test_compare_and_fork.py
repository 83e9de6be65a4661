"""Across runs in a real browser: two ticked rows open their comparison at the first step where
they part; a fork started from a timeline event opens on its own page, naming its parent."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import import_text, readme_shot, shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_two_ticked_runs_open_their_comparison(signed_in, flown_run, journal_of):
    def changed(event: dict) -> None:
        if event["kind"] == "ToolReturned" and event.get("tool") == "read_file":
            event["result"] = "def parse(line):\n    return []\n"

    import_text(journal_of("r-changed", changed), name="changed.jsonl")
    page = signed_in
    page.goto("/")
    page.get_by_label(f"compare {flown_run}").check()
    page.get_by_label("compare r-changed").check()
    page.get_by_role("button", name="Compare the two ticked runs").click()
    expect(page).to_have_url(re.compile(r"/runs/compare\?from=list&run="))
    expect(page.locator("#divergence h2")).to_contain_text("First divergence")
    expect(page.locator("#divergence")).to_contain_text("return []")
    shoot(page, "compare")
    readme_shot(page, "compare")


def test_a_fork_from_a_timeline_event_opens_on_its_own_page(signed_in, flown_run):
    page = signed_in
    page.goto(f"/runs/{flown_run}/")
    page.locator("#tab tr.event").first.get_by_role("link", name="fork").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(f"Fork {flown_run}")
    page.get_by_label("Message for").select_option("coder")
    page.get_by_label("Message", exact=True).fill("Keep the change small.")
    page.get_by_role("button", name="Fork and run").click()
    expect(page.locator(".lineage")).to_contain_text(f"Forked from {flown_run}")
    shoot(page, "fork")
    readme_shot(page, "fork")


def test_a_ticked_running_run_stays_ticked_through_its_rows_polls(signed_in, flown_run, nowhere):
    """A running (waiting, dead-lettered) run's row is polled and swapped whole: its tick was
    gone within two seconds, and "Compare the two ticked runs" had only the other one."""
    from services import runs

    running = runs.start_run("repo-fix", "first-flight", by="rosa")  # nobody drives it
    page = signed_in
    page.goto("/")
    page.get_by_label(f"compare {running}").check()
    page.get_by_label(f"compare {flown_run}").check()
    for _ in range(2):  # two polls of its row come and go
        with page.expect_response(lambda r: r.url.endswith(f"/runs/{running}/row")):
            pass
    expect(page.get_by_label(f"compare {running}")).to_be_checked()
    page.get_by_role("button", name="Compare the two ticked runs").click()
    expect(page).to_have_url(re.compile(rf"run={running}"))
    expect(page).to_have_url(re.compile(rf"run={flown_run}"))
