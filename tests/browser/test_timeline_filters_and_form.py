"""In a real browser: the timeline's filters go into the address bar (several kinds at once,
the lease toggle) and survive a reload; the new-run form offers the chosen team's scenarios and
prefills each scenario's own settings."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import settled, shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_two_kinds_and_the_lease_toggle_are_kept_in_the_url(signed_in, flown_run, watch):
    page = signed_in
    page.goto(f"/runs/{flown_run}/?tab=timeline")
    toggle = page.get_by_label("Show lease and driver events")
    expect(toggle).not_to_be_checked()
    page.get_by_label("Kinds").select_option(["MessageSent", "ToolReturned"])
    expect(page).to_have_url(re.compile(r"kind=MessageSent&kind=ToolReturned"))
    badges = page.locator("#events tr.event td:nth-child(2) .badge")
    expect(badges.first).to_be_visible()
    assert set(badges.all_inner_texts()) == {"MessageSent", "ToolReturned"}
    toggle.check()
    expect(page).to_have_url(re.compile(r"infra=1"))
    page.reload()
    expect(page.get_by_label("Show lease and driver events")).to_be_checked()
    assert set(badges.all_inner_texts()) == {"MessageSent", "ToolReturned"}
    expect(page.locator("#events tr.event td.num").first).to_have_text(re.compile(r"^\d+$"))
    shoot(page, "run-timeline-filtered-1280")
    watch.assert_clean()


def test_the_form_offers_the_teams_scenarios_and_each_scenarios_own_allowance(signed_in, watch):
    page = signed_in
    page.goto("/runs/new")
    scenario = page.get_by_label("Scenario")
    expect(scenario.locator("option[value='first-flight']")).to_have_count(1)
    page.get_by_label("Team").select_option("support-triage")
    expect(scenario.locator("option[value='refund-saga']")).to_have_count(1)
    expect(scenario.locator("option[value='first-flight']")).to_have_count(0)
    settled(page)  # the team's form is in; its selects answer a change once htmx settles it
    page.get_by_label("Team").select_option("repo-fix")
    # The form is drawn again for the team: choose its scenario once that form is in.
    expect(scenario.locator("option[value='refund-saga']")).to_have_count(0)
    expect(page.get_by_label("Scenario")).to_have_value("first-flight")
    settled(page)
    page.get_by_label("Scenario").select_option("budget-starved")
    expect(page.get_by_label("Allowance")).to_have_value("400")
    expect(page.locator("#new-run")).to_contain_text("The allowance is too small")
    expect(page.locator("#new-run")).to_contain_text("whatever the task")
    shoot(page, "new-run-budget-starved-1280")
    watch.assert_clean()
