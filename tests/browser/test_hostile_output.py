"""Agent output is data: markup, scripts and htmx attributes in a journal render as inert text
on every page that shows them."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import TABS_SHOWN, import_text, shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SCRIPT = "<script>alert(1)</script>"
IMAGE = "<img src=x onerror=alert(1)>"
LINK = '<a href="javascript:alert(1)">x</a>'
HTMX = '<div hx-get="/api/runs" hx-trigger="load">x</div>'
HOSTILE = f"{SCRIPT} {IMAGE} {LINK} {HTMX}"
RUN = "r-hostile"


def poison(event: dict) -> None:
    """Put the hostile text where agents and operators write: the task, a message, a reply."""
    if event["kind"] == "TeamStarted":
        event["task"] = HOSTILE
    elif event["kind"] == "MessageSent" and event["message_id"] == "m-001":
        event["payload"]["task"] = HOSTILE
    elif event["kind"] == "MessageSent" and event["message_id"] == "m-005":
        event["payload"]["reason"] = HOSTILE
    elif event["kind"] == "TeamFinished":
        event["reason"] = HOSTILE


def assert_inert(page) -> None:
    """Nothing of the hostile text became an element."""
    assert page.locator("img[src='x'], img[onerror]").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0
    assert page.locator("[hx-get='/api/runs'], [hx-trigger='load']").count() == 0
    assert page.evaluate(
        "[...document.scripts].every(s => s.src && !s.textContent.includes('alert'))"
    ), "a script element came from the page's content"


def test_hostile_agent_output_is_shown_as_text_and_never_runs(signed_in, journal_of, watch):
    import_text(journal_of(RUN, poison), name="hostile.jsonl")
    page = signed_in

    page.goto("/")
    row = page.locator(f"#row-{RUN}")
    expect(row.locator("td.task")).to_contain_text(SCRIPT)
    assert_inert(page)
    shoot(page, "hostile-runs")

    page.goto(f"/runs/{RUN}/")
    header = page.locator("#run-header")
    expect(header.get_by_text(HOSTILE, exact=True)).to_have_count(2)  # the task and the reason
    expect(header.get_by_text(HOSTILE, exact=True).first).to_be_visible()
    assert_inert(page)
    shoot(page, "hostile-run-header")

    for tab in TABS_SHOWN:
        page.get_by_role("tab", name=tab.capitalize()).click()
        expect(page.get_by_role("tabpanel")).to_have_attribute("aria-labelledby", f"tab-{tab}")
        expect(page.locator(TABS_SHOWN[tab]).first).to_be_visible()
        if tab == "timeline":
            first = page.locator("#events tr.event").first
            expect(first.locator("summary")).to_contain_text(SCRIPT)
            first.locator("summary").click()
            expect(first.locator("pre")).to_contain_text(HOSTILE.replace('"', '\\"'))
        elif tab == "threads":
            message = page.locator("#tab li", has_text="operator → orchestrator")
            message.locator("summary").click()
            expect(message.locator("pre")).to_be_visible()
            expect(message.locator("pre")).to_contain_text(HOSTILE.replace('"', '\\"'))
        elif tab == "audit":
            accept = page.locator("#tab tbody tr", has=page.locator(".badge.ACCEPT"))
            accept.locator("summary").click()
            expect(accept.locator("pre")).to_contain_text(HOSTILE.replace('"', '\\"'))
            finished = page.locator("#tab tbody tr", has_text="TeamFinished:done")
            expect(finished.get_by_text(HOSTILE, exact=True)).to_be_visible()
        assert_inert(page)
        shoot(page, f"hostile-run-{tab}")

    page.wait_for_timeout(300)  # a `load` trigger would have fired by now
    api_calls = [url for url in watch.requests if "/api/runs" in url]
    assert api_calls == [], f"hostile markup made requests: {api_calls}"
    watch.assert_clean()
