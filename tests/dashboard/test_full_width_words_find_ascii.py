"""Words typed full-width (an input method's U+FF32 U+FF25 ...) find what agents wrote in ASCII on
the runs list and the review queues, as the search page's index (folded to NFKC) finds it; they
found nothing. Words as typed still find what was stored as typed."""

from __future__ import annotations

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime.events import DeadLettered, TeamStarted

pytestmark = pytest.mark.django_db

RUN, OTHER = "r-0123456789ab", "r-ba9876543210"


def wide(text: str) -> str:
    """`text` as an input method types it full-width (its space the ideographic one)."""
    return "".join("\u3000" if ch == " " else chr(ord(ch) + 0xFEE0) for ch in text)


@pytest.fixture
def two(db) -> None:
    journal = DjangoJournal()
    for run, task, reason in (
        (RUN, "refund order 7", "no reply from orders"),
        (OTHER, "\ufb01le the ticket", "timeout"),  # a ligature, stored as typed
    ):
        journal.append(
            f"run-{run}",
            [
                TeamStarted(run_id=run, team="solo", scenario="solo-fix", task=task),
                DeadLettered(run_id=run, letter_id=f"{run}:1", reason=reason, attempts=2),
            ],
            0,
        )
    projection.catch_up()


@pytest.mark.parametrize(
    ("q", "found"), [(wide("REFUND"), RUN), (wide("order 7"), RUN), ("\ufb01le", OTHER)]
)
def test_the_runs_list_finds_full_width_words(as_reviewer, two, q, found):
    page = as_reviewer.get("/", {"q": q}).content.decode()
    assert found in page
    assert ({RUN, OTHER} - {found}).pop() not in page


@pytest.mark.parametrize(("q", "found"), [(wide("NO REPLY"), RUN), (wide("timeout"), OTHER)])
def test_the_dead_letters_queue_finds_full_width_words(as_reviewer, two, q, found):
    page = as_reviewer.get("/review/dead-letters", {"q": q, "status": "all"}).content.decode()
    assert f"{found}:1" in page
    assert f"{({RUN, OTHER} - {found}).pop()}:1" not in page
