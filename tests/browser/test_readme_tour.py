"""The README's tour, taken from today's pages: each picture's page is brought to what its
caption says, that is checked on the page, and the picture is written as
var/screenshots/readme-<name>.png (copied over docs/screenshots/<name>.png by hand).

The runs here are started and driven to their end in this process, as a worker would drive
them (an in-memory broker nobody reads), so their pages are those of runs flown here, not
imported. Other README pictures are taken where a test already reaches their state: the runs
list, the 390 px pair and a desk run's refund (test_small_screens.py), a conflict by its
values, two runs compared, a fork and the metrics page (the tests of each); so are docs/'s, a
triage run's answer (test_run_page.py, for docs/specialists.md) and a run whose model is down
(for docs/models.md).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from services import runs
from tests.browser.conftest import readme_shot, settled
from tests.dashboard.conftest import drive

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TOUR = {"width": 1280, "height": 900}


def test_a_premature_done_runs_tabs_show_the_reject_the_refusal_and_the_accept(
    signed_in, nowhere, watch
):
    """The coder says DONE without running the tests; the reviewer rejects, the harness
    refuses to integrate without an ACCEPT, the coder brings the evidence, the reviewer
    accepts and the integration relies on that ACCEPT."""
    run_id = runs.start_run("repo-fix", "premature-done", by="rosa")
    assert drive(run_id) == "done"
    page = signed_in
    page.set_viewport_size(TOUR)

    page.goto(f"/runs/{run_id}/?tab=timeline")
    expect(page.locator("#run-header h1 > span.badge").first).to_have_text("done")
    expect(page.locator("#run-header")).to_contain_text("repo-fix · premature-done")
    events = page.locator("#events tr.event")
    expect(events.first).to_contain_text("TeamStarted")
    expect(events.first.locator("summary")).to_contain_text("Make the failing slug test pass")
    readme_shot(page, "run-timeline")

    def open_tab(name: str) -> None:
        tab = page.get_by_role("tab", name=name)
        tab.click()
        expect(tab).to_have_attribute("aria-selected", "true")
        expect(page.get_by_role("tabpanel")).to_have_attribute(
            "aria-labelledby", f"tab-{name.lower()}"
        )

    open_tab("Threads")
    lanes = page.locator("#tab section.lane")
    expect(lanes).to_have_count(3)  # the plan, T1 (the fix and its reviews), T3 (the suite)
    t1 = lanes.nth(1)
    expect(t1.locator(".badge.REJECT")).to_have_count(1)
    expect(t1.locator(".badge.ACCEPT")).to_have_count(1)
    expect(t1).to_contain_text("fixed slugify; it certainly works now")
    readme_shot(page, "run-threads")

    open_tab("Bill")
    chart = page.locator("#tab svg.chart")
    expect(chart.locator("rect.chart-bar")).to_have_count(4)
    for agent in ("orchestrator", "coder", "reviewer", "tester"):
        expect(chart.locator("text.chart-label", has_text=agent)).to_have_count(1)
    expect(page.locator("#tab")).to_contain_text(re.compile(r"Allowance 5,000 · spent \d+"))
    readme_shot(page, "run-bill")

    open_tab("Audit")
    rows = page.locator("#tab tbody tr")
    whats = [w.strip() for w in rows.locator("td:nth-child(2) .badge").all_inner_texts()]
    order = [whats.index(w) for w in ("REJECT", "IntegrationRefused", "ACCEPT", "Integrated")]
    assert order == sorted(order), f"the audit's order: {whats}"
    reject = rows.nth(order[0])
    expect(reject).to_contain_text("reviewer")
    expect(reject).to_contain_text("No test output came with this change.")
    expect(rows.nth(order[1])).to_contain_text("no ACCEPT from the reviewer on T1")
    expect(rows.nth(order[2])).to_contain_text("Now with evidence: 2 passed, 0 failed.")
    accept_number = rows.nth(order[2]).locator("td.num a").inner_text()
    relied = rows.nth(order[3])
    expect(relied).to_contain_text("relied on reviewer's ACCEPT")
    expect(relied.get_by_role("link", name=accept_number)).to_be_visible()
    readme_shot(page, "run-audit")

    open_tab("Findings")
    finding = page.locator("#tab")
    expect(finding.get_by_role("heading", name="done without evidence")).to_be_visible()
    expect(finding).to_contain_text(
        "coder said DONE on T1 without a passing test run after its last edit"
    )
    page.set_viewport_size({"width": 1280, "height": 640})  # the one finding, not a blank page
    readme_shot(page, "run-findings")
    page.set_viewport_size(TOUR)

    # The trace: a lane per agent, a bar per call, messages as arrows; a model call opened.
    open_tab("Trace")
    trace = page.locator("svg.trace")
    for agent in ("orchestrator", "coder", "reviewer", "tester"):
        expect(trace.locator(f'g.trace-lane[data-lane="{agent}"]')).to_have_count(1)
    expect(trace.locator("a.trace-bar.chat").first).to_be_visible()
    expect(trace.locator("a.trace-bar.tool").first).to_be_visible()
    expect(trace.locator("line.trace-arrow").first).to_be_attached()
    page.get_by_role("link", name=re.compile(r"^coder model call, turn 0, at \+")).first.click()
    call = page.locator("#call")
    expect(call.get_by_role("heading", name="What the model was asked")).to_be_visible()
    expect(call.locator("li.said-user")).to_contain_text("Do the work your mail asks for.")
    expect(call.get_by_role("heading", name="What it answered")).to_be_visible()
    expect(call.locator("li.said-assistant").first).to_contain_text("read_file")
    page.mouse.move(0, 0)  # no bar's hover outline in the picture
    readme_shot(page, "run-trace", full_page=True)
    watch.assert_clean()


def test_a_dead_letter_waits_with_its_reason_and_its_retry_and_discard(signed_in, nowhere, watch):
    """The reviewer is absent: the coder's request goes unanswered twice and the task waits
    in the dead-letter queue for a person."""
    run_id = runs.start_run("repo-fix", "silent-dropout", by="rosa")
    assert drive(run_id) == "dead-lettered"
    page = signed_in
    page.set_viewport_size({"width": 1280, "height": 560})  # the one card, not a blank page
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Dead letters").click()
    card = page.locator("section.card", has=page.get_by_role("link", name=run_id))
    expect(card.locator("h2 .badge")).to_have_text("open")
    expect(card).to_contain_text("reviewer did not reply to 2 requests on T1")
    expect(card).to_contain_text("task T1")
    expect(card.get_by_label("Why retry")).to_be_visible()
    expect(card.get_by_role("button", name="Retry")).to_be_visible()
    expect(card.get_by_label("Why discard")).to_be_visible()
    expect(card.get_by_role("button", name="Discard")).to_be_visible()
    # The card's heading starts at its padding, as a conflict's does: the letter's anchor
    # stood before it as the card's first child, and the heading kept its top margin.
    card_box, heading_box = card.bounding_box(), card.locator("h2").bounding_box()
    assert card_box is not None and heading_box is not None
    assert heading_box["y"] - card_box["y"] <= 18, "a gap above the dead letter's heading"
    readme_shot(page, "dead-letters")
    watch.assert_clean()


def test_the_new_run_form_offers_the_teams_scenario_its_own_settings_and_the_options(
    signed_in, watch
):
    """A person starts a run from the form: the team and its scenarios (each described), a
    task, the backend, and the scenario's own allowance and caps prefilled."""
    page = signed_in
    page.set_viewport_size(TOUR)
    page.goto("/runs/new")
    page.get_by_label("Scenario").select_option("premature-done")
    settled(page)
    # The task left to the scenario: the scripted agents say what it scripts (a task typed
    # here is warned of as needing a model backend).
    expect(page.get_by_label("Task")).to_have_value("")
    expect(page.get_by_label("Team")).to_have_value("repo-fix")
    expect(page.get_by_label("Model backend")).to_have_value("scripted")
    expect(page.get_by_label("Allowance")).not_to_have_value("")  # the scenario's own
    expect(page.get_by_label("Turn cap")).not_to_have_value("")
    expect(page.get_by_label("Also fly the single-agent baseline")).to_be_visible()
    expect(page.get_by_label("Votes on the critical decision")).to_be_visible()
    readme_shot(page, "new-run", full_page=True)
    watch.assert_clean()
