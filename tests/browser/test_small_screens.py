"""On a phone (390 px) the runs list is a list of cards, and a run's bill, audit and tabs fit:
nothing scrolls sideways, neither the page nor a table inside it."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import NARROW, WIDE, overflow, shoot, sideways

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Every visible element of `selector` that reaches past the window's right edge.
PAST_THE_EDGE = """
(selector) => [...document.querySelectorAll(selector)]
  .filter((e) => e.getClientRects().length && e.getBoundingClientRect().right > window.innerWidth + 1)
  .map((e) => e.textContent.trim().slice(0, 40))
"""


def box(locator):
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not shown"
    return found


def test_at_390_px_the_runs_list_is_one_card_per_run_that_fits_the_window(
    signed_in, flown_run, watch
):
    page = signed_in
    page.set_viewport_size(NARROW)
    page.goto("/")
    row = page.locator(f"#row-{flown_run}")
    expect(row.get_by_role("link", name=flown_run)).to_be_visible()
    shoot(page, "runs-cards-390")

    assert overflow(page) <= 1
    assert sideways(page) == []
    # A card: the column headings are gone from view and each value carries its own label;
    # the status, the id and the findings lead, the task reads below them across the card.
    expect(page.locator("table.runs thead")).not_to_be_in_viewport()
    status, run_id = box(row.locator("td.status")), box(row.locator("td.run-id"))
    task = box(row.locator("td.task"))
    assert abs(status["y"] - run_id["y"]) < status["height"], "status and id share a line"
    assert task["y"] >= run_id["y"] + run_id["height"] - 1, "the task reads below the id"
    assert task["width"] > 0.8 * (box(row)["width"] - 24), "the task spans the card"
    tokens = row.locator("td[data-label='Tokens']")
    expect(tokens).to_be_visible()
    assert (
        page.evaluate("(e) => getComputedStyle(e, '::before').content", tokens.element_handle())
        == '"Tokens "'
    )
    assert page.evaluate(PAST_THE_EDGE, "table.runs td") == []
    assert box(row)["width"] <= NARROW["width"]
    watch.assert_clean()


def test_at_1280_px_the_runs_list_stays_a_table_with_its_headings(signed_in, flown_run):
    page = signed_in
    page.set_viewport_size(WIDE)
    page.goto("/")
    expect(page.locator("table.runs thead")).to_be_in_viewport()
    row = page.locator(f"#row-{flown_run}")
    status, task = box(row.locator("td.status")), box(row.locator("td.task"))
    assert abs(status["y"] - task["y"]) < 2, "one line per run"


def test_at_390_px_a_runs_bill_audit_and_tabs_fit_without_scrolling_sideways(
    signed_in, flown_run, watch
):
    page = signed_in
    page.set_viewport_size(NARROW)
    page.goto(f"/runs/{flown_run}/?tab=bill")
    bill = page.get_by_role("tabpanel")
    expect(bill.locator("svg.chart")).to_be_visible()
    shoot(page, "run-bill-cards-390")
    assert overflow(page) <= 1
    assert sideways(page) == []
    # Every column of the bill per agent is on screen, labelled: none is cut off.
    coder = bill.locator("table.cards tbody tr", has=page.locator("th", has_text="coder")).first
    labels = ("Model", "Tokens", "In", "Out", "Calls", "Share", "Cost (USD)", "Budget", "Remaining")
    for label in labels:
        cell = coder.locator(f"td[data-label='{label}']")
        expect(cell).to_be_visible()
        assert box(cell)["x"] >= 0 and box(cell)["x"] + box(cell)["width"] <= NARROW["width"]
    assert page.evaluate(PAST_THE_EDGE, "#tab td, #tab th, #tab p") == []

    # The tabs all show, each reachable by a tap, and switch in place.
    tabs = page.get_by_role("tab")
    for i in range(tabs.count()):
        expect(tabs.nth(i)).to_be_in_viewport(ratio=1)
    assert page.evaluate(PAST_THE_EDGE, "nav.tabs a") == []
    page.get_by_role("tab", name="Audit").click()
    expect(page.get_by_role("tab", name="Audit")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#tab tbody tr").first).to_be_visible()
    shoot(page, "run-audit-cards-390")
    assert overflow(page) <= 1
    assert sideways(page) == []
    watch.assert_clean()


OWN = ("run-", "worker-", "saga-", "breakers-", "lease-", "control-")


def import_saga(fly_team):
    """The triage team's refund saga, flown and imported: its run's own streams only (an
    import carries those; the effect ledger and the facts are shared)."""
    from tests.browser.conftest import import_text

    saga = fly_team("refund-saga", team="support-triage")
    own = [
        raw
        for raw in saga.path.read_text().splitlines()
        if json.loads(raw).get("stream", "").startswith(OWN)
    ]
    import_text("\n".join(own) + "\n", name=saga.path.name)
    return saga


def test_runs_of_every_team_read_as_cards_at_390_px_and_the_desks_refund_is_in_its_audit(
    signed_in, flown_run, fly_team, settings, tmp_path, watch
):
    """The desk's runs flown here, a triage run imported beside the repo-fix one; the pictures
    are the README's."""
    from services import runs
    from tests.browser.conftest import SHOTS
    from tests.dashboard.conftest import drive
    from tests.tasks.conftest import use_broker

    import_saga(fly_team)
    use_broker("memory://", {})  # the desk's steps are driven here: nobody reads the queue
    settings.WORKSPACES = tmp_path / "workspaces"
    try:
        refund = runs.start_run("support-desk", "double-refund", by="rosa")
        assert drive(refund) == "done"
        parked = runs.start_run("support-desk", "lost-update", by="rosa")
        assert drive(parked) == "escalated"
    finally:
        use_broker(settings.CELERY_BROKER_URL, settings.CELERY_BROKER_TRANSPORT_OPTIONS)
    page = signed_in
    page.set_viewport_size({"width": 1280, "height": 760})
    page.goto("/")
    expect(page.locator("table.runs tbody tr")).to_have_count(4)
    page.screenshot(path=SHOTS / "readme-runs.png", caret="initial")

    page.goto(f"/runs/{refund}/?tab=audit")
    row = page.locator("#tab tbody tr", has=page.locator(".badge.refund"))
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Refund of 4999 cents on order:")
    expect(row).to_contain_text("decided by support-agent (issue_refund, call support-agent-2-1)")
    expect(row.locator(".badge.succeeded")).to_have_text("succeeded")
    expect(row).to_contain_text("refund_id rf-")
    row.scroll_into_view_if_needed()
    page.screenshot(path=SHOTS / "readme-run-audit-refund.png", caret="initial")

    page.set_viewport_size(NARROW)
    page.goto("/")
    expect(page.locator("table.runs tbody tr")).to_have_count(4)
    assert overflow(page) <= 1
    assert sideways(page) == []
    assert page.evaluate(PAST_THE_EDGE, "table.runs td") == []
    page.locator("table.runs").scroll_into_view_if_needed()
    page.screenshot(path=SHOTS / "readme-runs-390.png", caret="initial")
    page.goto(f"/runs/{refund}/?tab=bill")
    expect(page.locator("#tab svg.chart")).to_be_visible()
    assert overflow(page) <= 1
    assert sideways(page) == []
    page.locator("#tab table.cards").first.scroll_into_view_if_needed()
    page.screenshot(path=SHOTS / "readme-run-bill-390.png", caret="initial")

    # The conflict the lost update parked, by its values, fits too.
    page.goto("/review/conflicts")
    card = page.locator("section.card", has_text="· status")
    expect(card.locator("p.current")).to_contain_text('"shipped" at version 2')
    shoot(page, "conflicts-390")
    assert overflow(page) <= 1
    assert page.evaluate(PAST_THE_EDGE, "section.card p, section.card label, section.card h3") == []
    watch.assert_clean()


def test_at_390_px_search_and_the_dead_letters_fit_the_window(signed_in, flown_run, watch):
    """Search's runs read as cards like the runs list, and a dead letter's two forms wrap
    inside its card (its Discard button stood past the window's edge)."""
    from journal_store import projection
    from journal_store.journal import DjangoJournal
    from runtime.events import DeadLettered

    DjangoJournal().append(
        "run-r-5ma11de77e12",
        [DeadLettered(run_id="r-5ma11de77e12", letter_id="r-5ma11de77e12:1", reason="no reply")],
        0,
    )
    projection.catch_up()
    page = signed_in
    page.set_viewport_size(NARROW)
    page.goto("/search?q=parser")
    expect(page.get_by_role("link", name=flown_run).first).to_be_visible()
    shoot(page, "search-390")
    assert overflow(page) <= 1
    assert sideways(page) == []
    page.goto("/review/dead-letters")
    expect(page.get_by_role("button", name="Discard")).to_be_visible()
    shoot(page, "dead-letters-390")
    assert overflow(page) <= 1
    assert page.evaluate(PAST_THE_EDGE, ".card button, .card input") == []
    watch.assert_clean()


def test_at_390_px_a_runs_timeline_reads_as_cards_with_what_happened_on_screen(
    signed_in, fly_team, watch
):
    """The timeline was a table that scrolled sideways: an event of a stream beside the run
    (a specialist's, a saga's) is numbered by that stream's name, which does not wrap, and
    that column pushed what happened past the window's edge. Now each event is a card: its
    number and kind, its agent, task and time, labelled, and what happened across the card."""
    saga = import_saga(fly_team)
    page = signed_in
    page.set_viewport_size(NARROW)
    page.goto(f"/runs/{saga.run_id}/?tab=timeline")
    beside = page.locator("#events tr.event", has=page.locator("td.num", has_text="worker-S"))
    expect(beside.first).to_be_visible()
    shoot(page, "run-timeline-cards-390")
    assert overflow(page) <= 1
    assert sideways(page) == []
    assert page.evaluate(PAST_THE_EDGE, "#events td") == []
    what = box(beside.first.locator("td.full"))
    assert what["width"] > 0.8 * (box(beside.first)["width"] - 24), "what happened spans the card"
    agent = page.locator("#events tr.event td[data-label='Agent']:not(:empty)").first
    expect(agent).to_be_visible()
    assert (
        page.evaluate("(e) => getComputedStyle(e, '::before').content", agent.element_handle())
        == '"Agent "'
    )

    page.set_viewport_size(WIDE)  # a wide window keeps the table and its headings
    assert box(page.locator("table.timeline thead"))["x"] >= 0
    what, when = box(beside.first.locator("td.full")), box(beside.first.locator("td.when"))
    assert abs(what["y"] - when["y"]) < 2, "one line per event"
    # How long after the start ("+5.7 s") is never broken between its number and its unit
    # (at some widths the when column came to, "+0.0" ended a line and "s" began the next).
    after = beside.first.locator("td.when .muted")
    assert page.evaluate("(e) => getComputedStyle(e).whiteSpace", after.element_handle()) in (
        "nowrap",
        "pre",
    )
    watch.assert_clean()


def test_at_390_px_the_metrics_page_fits_the_window(signed_in, flown_run, watch):
    # Its definitions sat beside their names, and the longest name's key
    # (`coordination_cost_per_verified_success`) made the page 158 px wider than the window.
    page = signed_in
    page.set_viewport_size(NARROW)
    page.goto("/metrics")
    definitions = page.locator("#definitions dl")
    expect(definitions).to_contain_text("coordination_cost_per_verified_success")
    shoot(page, "metrics-390")
    assert overflow(page) <= 1
    assert page.evaluate(PAST_THE_EDGE, "#definitions dt, #definitions dd") == []
    watch.assert_clean()
