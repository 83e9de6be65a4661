"""A reviewer decides the support desk's parked conflict by its values: the order's current
status and version stand beside the claims, the card turns decided in place (the winner marked,
the fact's new value and version), and the run and its conflict link to each other, the run's
header and list row saying it was resolved."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from desk.models import Order
from journal_store import projection
from services import runs
from tests.browser.conftest import readme_shot, shoot
from tests.dashboard.conftest import drive
from tests.tasks.conftest import use_broker

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def lost_update(transactional_db, tmp_path, settings):
    """A desk run whose two agents disagree on order A-4471's status, driven in this process."""
    use_broker("memory://", {})  # its steps are driven here: nobody reads the queue
    settings.WORKSPACES = tmp_path / "workspaces"
    try:
        run_id = runs.start_run(
            "support-desk", "lost-update", by="owner", desk={"order_id": "A-4471"}
        )
        assert drive(run_id) == "escalated"
    finally:
        use_broker(settings.CELERY_BROKER_URL, settings.CELERY_BROKER_TRANSPORT_OPTIONS)
    projection.catch_up()
    return run_id


def test_a_reviewer_decides_a_desk_conflict_by_value_and_the_run_says_it_was_resolved(
    signed_in, lost_update, watch
):
    page = signed_in
    run_id = lost_update
    # The run's page stays open in a second tab: its header follows the decision by itself.
    watching = page.context.new_page()
    watching.goto(f"/runs/{run_id}/")
    expect(watching.locator("#run-header h1 .badge").first).to_have_text("waiting for a person")
    page.goto(f"/runs/{run_id}/")
    expect(page.locator("#run-header h1 .badge").first).to_have_text("waiting for a person")
    # From the run to its conflict.
    page.locator(".review-links").get_by_role("link", name="conflict on order:A-4471").click()
    card = page.locator("section.card", has_text="order:A-4471 · status")
    expect(card).to_be_visible()
    page.evaluate("window.__sameDocument = true")

    now = card.locator("p.current")
    expect(now).to_have_text(
        re.compile(r'^Now: order:A-4471 · status is "shipped" at version 2, set by order-agent\.')
    )
    shipped = card.locator(".claims > .card", has_text="claimed by order-agent")
    expect(shipped.locator(".badge.current")).to_have_text("current value")
    expect(card.locator(".claims > .card .badge.current")).to_have_count(1)
    shoot(page, "conflict-by-value")
    readme_shot(page, "conflicts", full_page=True)

    card.get_by_label('commit "cancelled" (claimed by support-agent in run').check()
    card.get_by_label("Why").fill("the customer cancelled at 09:10, before the 09:12 scan")
    card.get_by_role("button", name="Record the decision").click()
    expect(card.get_by_role("status")).to_contain_text("resolution recorded")
    expect(card.get_by_role("status")).to_be_focused()  # not the page's top: the form is gone
    # In place: decided, the winner marked, the order's new value and version beside it.
    expect(card.locator("h2 .badge")).to_have_text("resolved")
    chosen = card.locator(".claims > .card.chosen")
    expect(chosen).to_contain_text('"cancelled"')
    expect(chosen.locator(".badge.current")).to_have_text("current value")
    expect(card.locator(".claims > .card", has_text="claimed by order-agent")).to_contain_text(
        "not chosen"
    )
    expect(card.locator("p.current")).to_contain_text(
        '"cancelled" at version 3, set by reviewer:rosa'
    )
    expect(card).to_contain_text('chose "cancelled", committed as version 3')
    assert page.evaluate("window.__sameDocument === true"), "the decision reloaded the page"
    shoot(page, "conflict-by-value-decided")
    order = Order.objects.get(order_id="A-4471")
    assert (order.status, order.version) == ("cancelled", 3)

    # The open tab's header says so without a reload (it looks again every 5 s while waiting).
    header = watching.locator("#run-header h1 .badge").first
    expect(header).to_have_text("resolved by a person", timeout=20_000)
    expect(watching.locator(".review-links .badge.resolved")).to_be_visible()
    watching.close()

    # From the conflict back to its run: the header and the list row say it was resolved.
    card.get_by_role("link", name=run_id).click()
    expect(page.locator("#run-header h1 .badge").first).to_have_text("resolved by a person")
    expect(page.locator(".review-links .badge.resolved")).to_be_visible()
    page.goto("/")
    expect(page.locator(f"#row-{run_id} td.status")).to_have_text("resolved by a person")
    watch.assert_clean()
