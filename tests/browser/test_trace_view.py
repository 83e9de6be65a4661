"""A first flight's trace tab in a real Chromium: the calls as bars, a model call opened (by
click and from the keyboard) as a chat with what the model was asked and what it answered, and
the tab at 390 px without the page scrolling sideways."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import NARROW, overflow, shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_first_flights_trace_shows_its_calls_and_opens_one_as_a_chat(signed_in, flown_run, watch):
    page = signed_in
    page.goto(f"/runs/{flown_run}/")
    page.get_by_role("tab", name="Trace").click()
    expect(page.get_by_role("tabpanel")).to_have_attribute("aria-labelledby", "tab-trace")
    expect(page).to_have_url(re.compile(rf"/runs/{flown_run}/\?tab=trace$"))
    trace = page.locator("svg.trace")
    expect(trace.locator("a.trace-bar")).to_have_count(16)
    expect(trace.locator("a.trace-bar.chat")).to_have_count(10)
    expect(trace.locator("a.trace-bar.tool")).to_have_count(6)
    expect(trace.locator("line.trace-arrow")).to_have_count(7)
    for agent in ("orchestrator", "coder", "reviewer", "tester"):
        expect(trace.locator(f'g.trace-lane[data-lane="{agent}"]')).to_have_count(1)
    shoot(page, "run-trace-1280")

    bar = page.get_by_role("link", name=re.compile(r"^coder model call, turn 0, at \+"))
    bar.click()
    call = page.locator("#call")
    expect(call).to_be_visible()
    expect(call.get_by_role("heading", name="What the model was asked")).to_be_visible()
    expect(call.locator("li.said-user")).to_contain_text("Do the work your mail asks for.")
    expect(call.locator("li.said-assistant").first).to_be_visible()
    expect(call.locator("li.said-assistant").first).to_contain_text("asks for")
    expect(call).to_contain_text("tokens")
    shoot(page, "run-trace-call-1280")

    # From the keyboard: Tab goes from the drawing's box to its first bar, and on through the
    # bars; Enter opens the focused one's call.
    page.locator(".trace-wrap").focus()
    page.keyboard.press("Tab")
    expect(trace.locator("a.trace-bar").first).to_be_focused()
    page.keyboard.press("Tab")
    expect(trace.locator("a.trace-bar").nth(1)).to_be_focused()
    reviewer = page.get_by_role("link", name=re.compile(r"^reviewer model call, turn 0, at \+"))
    reviewer.focus()
    expect(reviewer).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#call h2")).to_contain_text("reviewer")
    expect(page.locator("#call li.said-user")).to_contain_text("Review the change in your mail.")
    watch.assert_clean()


def test_the_trace_tab_fits_a_phone_and_its_bars_still_open_their_call(signed_in, flown_run, watch):
    page = signed_in
    page.set_viewport_size(NARROW)
    page.goto(f"/runs/{flown_run}/?tab=trace")
    expect(page.locator("svg.trace a.trace-bar")).to_have_count(16)
    assert overflow(page) <= 1, f"the page scrolls sideways by {overflow(page)} px"
    box = page.locator(".trace-wrap").bounding_box()
    assert box is not None and box["width"] <= NARROW["width"]
    shoot(page, "run-trace-390")
    bar = page.get_by_role("link", name=re.compile(r"^tester model call, turn 0, at \+"))
    bar.click()  # scrolled into view inside its box
    expect(page.locator("#call li.said-user")).to_contain_text("Verify what your mail asks")
    assert overflow(page) <= 1, f"the call scrolls the page sideways by {overflow(page)} px"
    shoot(page, "run-trace-call-390")
    watch.assert_clean()
