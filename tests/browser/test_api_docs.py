"""The API docs in a real browser: Swagger UI renders every endpoint from our own static files,
under the site's Content-Security-Policy, asking no other host for anything."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import shoot

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_the_api_docs_render_offline_for_a_signed_in_person(signed_in, live_server, watch):
    page = signed_in
    page.get_by_role("link", name="API").click()
    # Swagger UI reads and draws the whole schema in the browser first: on CI's two busy cores
    # that took past expect's 5 s once (a61c26af passed, 697e7067 failed, the page drawn).
    expect(page.locator(".opblock-summary-path").first).to_be_visible(timeout=30_000)
    # runs, journals, review, intents, search, metrics
    expect(page.locator(".opblock-tag-section")).to_have_count(6)
    expect(page.get_by_text("/api/review/dead-letters/{letter_id}/{decision}")).to_be_visible()
    # An operation opens and runs from the page, on the person's own session.
    operation = page.locator("#operations-runs-dashboard_api_list_runs")
    operation.locator(".opblock-summary-control").click()
    operation.get_by_role("button", name="Try it out").click()
    operation.get_by_role("button", name="Execute").click()
    expect(
        operation.locator(".live-responses-table tr.response .response-col_status")
    ).to_have_text("200")
    shoot(page, "api-docs")
    # And the way back to the pages, which Swagger UI's own page lacks.
    page.get_by_role("link", name="← Back to Minutes").click()
    expect(page.get_by_role("heading", name="Runs")).to_be_visible()
    elsewhere = [url for url in watch.requests if not url.startswith(live_server.url)]
    assert elsewhere == [], elsewhere
    watch.assert_clean()
