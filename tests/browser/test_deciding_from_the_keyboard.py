"""A decision made from the keyboard leaves the keyboard where it was: on what the decision
said, in the card that turned decided. The form that held the focus is gone once the card is
drawn again, and the focus fell back to the page's start, so a reviewer working down the
queue with Tab began again from the navigation after every decision."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime.events import DeadLettered

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

RUNS = ("r-0ceb0a4d0001", "r-0ceb0a4d0002")
FOCUSED = (
    "document.activeElement.closest('section.card')?.id + ' '"
    " + document.activeElement.outerHTML.slice(0, 120)"
)


@pytest.fixture
def letters(transactional_db) -> list[str]:
    for run in RUNS:
        DjangoJournal().append(
            f"run-{run}",
            [DeadLettered(run_id=run, letter_id=f"{run}:1", reason="no reply", attempts=2)],
            0,
        )
    projection.catch_up()
    return [f"{run}:1" for run in RUNS]


def test_after_a_decision_by_keyboard_the_focus_is_on_what_it_said_in_its_card(
    signed_in, letters, watch
):
    page = signed_in
    page.goto("/review/dead-letters")
    top, below = page.locator("section.card").nth(0), page.locator("section.card").nth(1)
    decided = next(letter for letter in letters if letter in top.inner_text())
    second = page.locator("section.card", has_text=next(x for x in letters if x != decided))
    expect(second).to_have_id(below.get_attribute("id") or "")
    first = page.locator("section.card", has_text=decided)
    first.get_by_label("Why discard").focus()
    page.keyboard.type("the reviewer is gone for good")
    page.keyboard.press("Enter")
    said = first.get_by_role("status")
    expect(said).to_contain_text(f"discard recorded for {decided}")
    expect(said).to_be_focused()
    # The browser's own autofocus of inserted content comes at its next frame, after htmx's:
    # a person's next key is frames later, a test's is not.
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")
    # Tab goes on down the queue, to the next letter, not back to the navigation.
    page.keyboard.press("Tab")
    where = page.evaluate(FOCUSED)
    assert where.split()[0] == second.get_attribute("id"), where
    watch.assert_clean()
