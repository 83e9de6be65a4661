"""Enter in a runs list filter box filters once: one step in the history, so Back goes to the
list before the filter. Enter commits the box's value (a change) and submits the form, and
the form asked for the list on each, each answer pushing its address: Back went to the same
filtered list, and it took a second Back to leave it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import settled

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("box", ["#tag", "#q"])
def test_enter_in_a_filter_box_is_one_step_back(signed_in, watch, box):
    page = signed_in
    page.goto("/?team=repo-fix")
    settled(page)
    steps = page.evaluate("history.length")
    page.locator(box).press_sequentially("nightly")
    page.locator(box).press("Enter")
    expect(page).to_have_url(re.compile(r"=nightly"))
    settled(page)
    # Past the search box's own wait after a key (400 ms), which could ask once more.
    page.wait_for_timeout(800)
    settled(page)
    assert page.evaluate("history.length") == steps + 1
    page.go_back()
    expect(page).to_have_url(re.compile(r"/\?team=repo-fix$"))
    expect(page.locator(box)).to_have_value("")
    assert watch.errors == [] and watch.dialogs == []
