"""A page left open while the database does not answer for a while (a restart) keeps what it
shows and comes back to life after: the polls that swap themselves (a run's header, a runs
list's rows) were replaced by the 503's sentence at the first unanswered poll and never asked
again (the header lost its buttons, the rows became paragraphs), and a decision's form posted
meanwhile was replaced, with the reason typed in it, by "try again in a moment".

The outage is this process's: the live server is a thread of it, and every cursor its
connections open raises OperationalError (what a database restarting raises) until the test
says it is back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from django.db import OperationalError, connections
from playwright.sync_api import expect

from services import runs
from tests.browser.conftest import settled, shoot
from tests.security.test_small_decision_reasons import conflict

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SAID = "The database did not answer"


@pytest.fixture
def outage(monkeypatch):
    """A switch: inside `with outage():`, the database does not answer anyone."""

    @contextlib.contextmanager
    def down() -> Iterator[None]:
        def refused(self, name=None):
            raise OperationalError("the database system is shutting down")

        with monkeypatch.context() as patched:
            patched.setattr(type(connections["default"]), "create_cursor", refused)
            yield

    return down


def answered(page, path: str, status: int):
    """Wait for the page's own request of `path` to be answered with `status`."""
    return page.expect_response(lambda r: r.url.endswith(path) and r.status == status)


def refusals_only(watch) -> None:
    """Chromium logs every 503 answer to the console; nothing else may have gone wrong."""
    others = [e for e in watch.errors if "the server responded with a status of 503" not in e]
    assert others == [] and watch.dialogs == []


def test_a_runs_header_and_its_list_row_poll_on_through_an_outage(
    signed_in, nowhere, outage, watch
):
    page = signed_in
    run_id = runs.start_run("repo-fix", "first-flight", by="rosa")  # running: nobody drives it
    page.goto(f"/runs/{run_id}/")
    header = page.locator("#run-header")
    expect(header.get_by_role("button", name="Check replay")).to_be_visible()

    with (
        outage(),
        answered(page, f"/runs/{run_id}/header", 503),
        answered(page, "&live=1", 503),  # the timeline's live tail
    ):
        pass
    settled(page)
    expect(page.locator("#events tr#tail")).to_contain_text("Live: new events appear here")
    # The header is as it was, buttons and all, and the page says why it stands still.
    expect(header.get_by_role("button", name="Check replay")).to_be_visible()
    expect(header.get_by_role("button", name="Interrupt")).to_be_visible()
    expect(header).not_to_contain_text(SAID)
    expect(page.locator("#outage")).to_contain_text(SAID)
    shoot(page, "outage-run-header")
    # The database is back: the header's poll is still there, and is answered again.
    with answered(page, f"/runs/{run_id}/header", 200):
        pass
    expect(header.get_by_role("button", name="Check replay")).to_be_visible()

    page.goto("/")
    row = page.locator(f"tr#row-{run_id}")
    expect(row.get_by_role("link", name=run_id)).to_be_visible()
    # The notice goes into the live region the page began with, not a new element in its place:
    # a screen reader may not announce a region it did not know (a mark on the node survives).
    page.evaluate("document.getElementById('outage').keptSince = 'load'")
    with outage(), answered(page, f"/runs/{run_id}/row", 503):
        pass
    settled(page)
    expect(row.get_by_role("link", name=run_id)).to_be_visible()  # a row still, not a <p>
    expect(page.get_by_role("status").filter(has_text=SAID)).to_be_visible()
    assert page.evaluate("document.getElementById('outage').keptSince") == "load"
    expect(page.locator("table.runs")).not_to_contain_text(SAID)
    with answered(page, f"/runs/{run_id}/row", 200):
        pass
    expect(row.get_by_role("link", name=run_id)).to_be_visible()
    refusals_only(watch)


def test_a_decision_posted_during_an_outage_keeps_its_form_and_reason(signed_in, outage, watch):
    page = signed_in
    conflict_id = conflict()
    page.goto("/review/conflicts")
    card = page.locator(f"section#{conflict_id}")
    form = card.locator("form")
    form.locator("input[name=choice][value=k1]").check()
    reason = "refunded on the phone, ticket 4471"
    form.get_by_label("Why").fill(reason)

    with outage(), answered(page, f"/review/conflicts/{conflict_id}/resolve", 503):
        form.get_by_role("button", name="Record the decision").click()
    settled(page)
    expect(form.locator(".form-error")).to_contain_text(f"{SAID} (it may be restarting")
    expect(form.get_by_label("Why")).to_have_value(reason)  # what was typed stays
    expect(form.locator("input[name=choice][value=k1]")).to_be_checked()
    shoot(page, "outage-decision-kept")

    # Sent again once the database is back, it is recorded, and the card turns decided.
    form.get_by_role("button", name="Record the decision").click()
    expect(card.get_by_role("status")).to_contain_text(f"resolution recorded for {conflict_id}")
    expect(card).to_contain_text(reason)
    refusals_only(watch)
