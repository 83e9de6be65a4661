"""A control a person has reached with the keyboard keeps the focus when the part it is in
polls: a running run's header is drawn again every 2 s and a runs list's row every 2 s, and
their buttons and links had no id, so htmx could not give the focus back and it went to the
page's top (Tab then started again from "Skip to content")."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from services import runs
from tests.browser.conftest import settled

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Marks the element that has the focus now, so that the one that has it after the poll can be
# told apart: the poll draws the part anew, and the focus must be on the new element.
MARK = "() => { document.activeElement.beforeThePoll = true }"
OLD = "() => document.activeElement.beforeThePoll === true"


def focus_survives_a_poll(page, control, polled: str) -> None:
    control.focus()
    page.evaluate(MARK)
    with page.expect_response(lambda r: r.url.endswith(polled) and r.status == 200):
        pass
    settled(page)
    # The same control, drawn by the poll, has the focus: not the page, not the old element.
    expect(control).to_be_focused()
    assert page.evaluate(OLD) is False


def test_the_keyboard_stays_on_a_control_of_a_polled_header_and_row(signed_in, nowhere, watch):
    page = signed_in
    run_id = runs.start_run("repo-fix", "first-flight", by="rosa")  # running: nobody drives it
    page.goto(f"/runs/{run_id}/")
    header = page.locator("#run-header")
    expect(header.get_by_role("button", name="Check replay")).to_be_visible()
    for name in ("Check replay", "Interrupt"):
        focus_survives_a_poll(
            page, header.get_by_role("button", name=name), f"/runs/{run_id}/header"
        )
    link = header.get_by_role("link", name="Compare with…")
    focus_survives_a_poll(page, link, f"/runs/{run_id}/header")
    # And Tab goes on from there, not from the page's top.
    page.keyboard.press("Tab")
    expect(header.get_by_role("link", name="Search in this run")).to_be_focused()

    page.goto("/")
    link = page.locator(f"tr#row-{run_id}").get_by_role("link", name=run_id)
    focus_survives_a_poll(page, link, f"/runs/{run_id}/row")
    watch.assert_clean()
