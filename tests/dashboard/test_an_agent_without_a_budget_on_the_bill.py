"""The bill's Budget and Remaining of an agent with no ledger of its own (the support desk's
agents) are a dash that says why, as the page's other empty figures are, where both cells were
blank; an agent with a ledger (repo-fix's) shows its figures as before."""

from __future__ import annotations

import re

import pytest

from services import runs
from tests.dashboard.conftest import drive

pytestmark = pytest.mark.django_db

CELLS = re.compile(
    r'<td class="num( muted)?" data-label="(Budget|Remaining)"( title="([^"]*)")?>([^<]*)</td>'
)


def cells(page: str) -> list[tuple[str, str, str]]:
    """Each Budget and Remaining cell: its label, its title, its text."""
    return [(m[2], m[4] or "", m[5]) for m in CELLS.finditer(page)]


def test_a_desk_agent_without_a_budget_says_so(as_owner):
    run_id = runs.start_run("support-desk", "lost-update", by="owner", desk={"order_id": "B-1"})
    drive(run_id)
    page = as_owner.get(f"/runs/{run_id}/?tab=bill").content.decode()
    found = cells(page)
    assert len(found) >= 4  # two agents or more, two cells each
    for label, title, text in found:
        assert text == "\u2013", (label, found)  # the en dash of the other empty figures
        assert title.startswith("no budget"), (label, found)


def test_an_agent_with_a_budget_shows_its_figures(as_owner, done_run):
    page = as_owner.get(f"/runs/{done_run}/?tab=bill").content.decode()
    found = cells(page)
    assert found and all(re.fullmatch(r"-?[\d,]+", text) for _, _, text in found), found
