"""A word longer than the window (an agent's, a person's) wraps where it is shown: no page
scrolls sideways for it, at 1280 px or at 390 px. One 2,000-character word in a task made a
run's page 16,904 px wide, the runs list cut off its last columns, and a long word in a
discard's reason made the dead-letter queue 4,520 px wide."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import (
    NARROW,
    TABLET,
    TABS_SHOWN,
    WIDE,
    import_text,
    overflow,
    settled,
    shoot,
    sideways,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WORD = "L" * 3000
RUN = "r-longword"


def lengthen(event: dict) -> None:
    """One long word where agents and people write: the task, a message, the ending."""
    if event["kind"] == "TeamStarted":
        event["task"] = WORD
    elif event["kind"] == "MessageSent" and event["message_id"] == "m-001":
        event["payload"]["task"] = WORD
    elif event["kind"] == "TeamFinished":
        event["reason"] = WORD


def parked_letter(run_id: str) -> str:
    """A dead letter of the stored run `run_id`, waiting for a person, projected; its id."""
    from journal_store import projection
    from journal_store.journal import DjangoJournal
    from runtime.events import DeadLettered

    letter_id = f"{run_id}:1"
    letter = DeadLettered(run_id=run_id, letter_id=letter_id, reason="no reply", attempts=2)
    journal = DjangoJournal()
    journal.append(f"run-{run_id}", [letter], journal.version(f"run-{run_id}"))
    projection.catch_up()
    return letter_id


def fits(page, where: str, meant: str = "") -> None:
    """Nothing of the page scrolls sideways, the page nor anything in it, but the boxes made to
    scroll that `meant` selects."""
    settled(page)
    assert overflow(page) <= 1, f"{where} scrolls sideways by {overflow(page)} px"
    assert sideways(page, meant) == [], f"something of {where} scrolls sideways"


def test_a_long_word_wraps_on_every_page_that_shows_it(signed_in, journal_of, flown_run, watch):
    import_text(journal_of(RUN, lengthen), name="long.jsonl")
    page = signed_in
    for size in (WIDE, TABLET, NARROW):
        page.set_viewport_size(size)
        page.goto("/")
        expect(page.locator(f"#row-{RUN}")).to_be_visible()
        fits(page, f"the runs list at {size['width']} px")
        if size is WIDE:  # every column of every row still shows
            duration = page.locator(f"#row-{flown_run} td").last
            box = duration.bounding_box()
            assert box is not None and box["x"] + box["width"] <= size["width"] + 1
        page.goto(f"/runs/{RUN}/")
        fits(page, f"the run's page at {size['width']} px")
        for tab in TABS_SHOWN:
            page.get_by_role("tab", name=tab.capitalize()).click()
            expect(page.locator(TABS_SHOWN[tab]).first).to_be_visible()
            # On a phone the trace's drawing and the metrics' table of figures scroll in their
            # boxes, long word or not.
            meant = {"trace": ".trace-wrap", "metrics": ".table-wrap"}.get(tab, "")
            fits(page, f"the {tab} tab at {size['width']} px", meant if size is NARROW else "")
        page.goto(f"/runs/compare?a={RUN}&b={flown_run}")
        # (Its tables of figures scroll in their boxes on a phone, long word or not.)
        fits(page, f"the comparison at {size['width']} px", ".table-wrap" if size is NARROW else "")
    shoot(page, "long-word-compare-390")

    # A letter of a run still going: one of a run that has ended is not decided (409).
    waiting = f"{RUN}-waiting"
    letter = parked_letter(waiting)
    page.set_viewport_size(WIDE)
    page.goto("/review/dead-letters")
    card = page.locator("section.card", has_text=letter)
    card.get_by_label("Why discard").fill(WORD[:1900])
    card.get_by_role("button", name="Discard").click()
    expect(card.get_by_role("status")).to_contain_text(f"discard recorded for {letter}")
    for size in (WIDE, TABLET, NARROW):
        page.set_viewport_size(size)
        page.goto("/review/dead-letters?status=decided")
        fits(page, f"the decided letters at {size['width']} px")
        page.goto(f"/runs/{waiting}/?tab=audit")
        fits(page, f"the audit with the decision at {size['width']} px")
    shoot(page, "long-word-audit-390")
    watch.assert_clean()
