"""Token counts read in groups of three on the pages (12,000, not 12000), as the charts' axes
write them; and a budget used to its last token says it has 0 remaining, where the bill tab
drew a dash, as it does for an agent with no budget of its own."""

from __future__ import annotations

import re
from html import unescape

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime.events import (
    BudgetAllocated,
    BudgetDebited,
    ModelCalled,
    ModelResponded,
    TeamStarted,
)
from runtime.events.base import Usage

pytestmark = pytest.mark.django_db

RUN = "r-00000000abcd"


@pytest.fixture
def spent_to_the_last(db) -> None:
    on = {"run_id": RUN}
    coder = {**on, "agent": "coder", "task_id": "T1"}
    DjangoJournal().append(
        f"run-{RUN}",
        [
            TeamStarted(**on, team="solo", scenario="", task="a long task"),
            BudgetAllocated(**on, name="run", allowance=12_000),
            BudgetAllocated(**on, name="coder", allowance=1_500, parent="run"),
            ModelCalled(**coder, messages=1),
            ModelResponded(**coder, text="done", tool_calls=[], usage=Usage(total=1_500)),
            BudgetDebited(**coder, amount=1_500),
        ],
        0,
    )
    projection.catch_up()


def text_of(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def test_the_bill_tab_reads_in_groups_and_says_0_remaining(as_owner, spent_to_the_last):
    bill = text_of(as_owner.get(f"/runs/{RUN}/?tab=bill").content.decode())
    assert "Allowance 12,000 · spent 1,500 · remaining 10,500" in bill
    # The coder's row: 1,500 tokens, no split known (a dash each), a budget of 1,500 and 0 of
    # it remaining, not a dash.
    dash = "\u2013"
    assert re.search(rf"coder scripted 1,500 {dash} {dash} 1 100% \S+ 1,500 0\b", bill), bill


def test_the_header_and_the_list_read_in_groups(as_owner, spent_to_the_last):
    page = text_of(as_owner.get(f"/runs/{RUN}/").content.decode())
    assert "1,500 of 12,000 tokens" in page
    listed = text_of(as_owner.get("/").content.decode())
    assert "1,500 / 12,000" in listed
