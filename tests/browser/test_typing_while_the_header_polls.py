"""A running run's header reloads every 2 seconds; what a person is typing in it (a tag, why
stop) stays typed, focused, across the reloads. It used to be wiped at the next poll."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from services import runs
from services.control import Control
from tests.browser.conftest import shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_what_is_typed_in_the_header_survives_its_polls(signed_in, nowhere, watch):
    page = signed_in
    run_id = runs.start_run("repo-fix", "first-flight", by="rosa")  # running: nobody drives it
    page.goto(f"/runs/{run_id}/")
    header = page.locator("#run-header")
    expect(header.locator(".badge.running").first).to_be_visible()
    for box, text in (("#add-tag", "nightly"), ("#stop-reason", "wrong branch")):
        page.locator(box).fill(text)
        page.locator(box).focus()
        # two polls of the header come and go
        with page.expect_response(lambda r: r.url.endswith(f"/runs/{run_id}/header")):
            pass
        with page.expect_response(lambda r: r.url.endswith(f"/runs/{run_id}/header")):
            pass
        expect(page.locator(box)).to_have_value(text)
        expect(page.locator(box)).to_be_focused()
    # and what was typed is what is sent
    with page.expect_navigation():
        page.get_by_role("button", name="Interrupt").click()
    assert Control(run_id).stop_request().reason == "wrong branch"
    # The header says so until the run reaches it, and offers to go on instead.
    expect(header.locator(".stop-note")).to_contain_text("rosa asked it to stop (wrong branch)")
    expect(header.get_by_role("button", name="Go on instead")).to_be_visible()
    shoot(page, "run-header-stop-pending")
    watch.assert_clean()


def test_the_answer_to_a_button_in_the_header_survives_its_polls(signed_in, nowhere, watch):
    # "Check replay" on a running run answered, and the next poll of the header, two seconds
    # later, swapped the answer away before it could be read.
    page = signed_in
    run_id = runs.start_run("repo-fix", "first-flight", by="rosa")  # running: nobody drives it
    page.goto(f"/runs/{run_id}/")
    header = page.locator("#run-header")
    expect(header.locator(".badge.running").first).to_be_visible()

    page.get_by_role("button", name="Check replay").click()
    answer = page.locator("#replay-result")
    expect(answer).not_to_be_empty()
    said = answer.inner_text()
    for _ in range(2):  # two polls of the header come and go
        with page.expect_response(lambda r: r.url.endswith(f"/runs/{run_id}/header")):
            pass
    expect(answer).to_have_text(said)
    watch.assert_clean()
