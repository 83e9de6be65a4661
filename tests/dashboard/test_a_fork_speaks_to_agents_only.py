"""A fork's message and another backend are for the run's agents, its team's cast: not for
whoever else an event names (repo-fix's `operator`, who hands the orchestrator its task and
is no agent). A message for the operator was journalled, the fork driven, and nobody read it."""

from __future__ import annotations

import re

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoredEvent
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db


def read_at(run_id: str) -> int:
    return next(
        r.position
        for r in DjangoJournal().read(f"run-{run_id}")
        if r.event.kind == "ToolDispatched" and r.event.tool == "read_file"
    )


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"message": {"agent": "operator", "text": "Keep it small."}}, "message"),
        ({"models": {"operator": "zi"}}, "models"),
    ],
)
def test_the_api_refuses_a_change_for_no_agent_and_writes_nothing(as_owner, change, field):
    parent = run_of("first-flight")
    assert any(r.event.agent == "operator" for r in DjangoJournal().read(f"run-{parent}"))
    before = (StoredEvent.objects.count(), RunSummary.objects.count())
    response = as_owner.post(
        f"/api/runs/{parent}/fork",
        {"at": read_at(parent), **change},
        content_type="application/json",
    )
    assert response.status_code == 400, response.content
    assert response.json()["detail"] == (
        f"{field}: the run has no agent 'operator' (it has coder, orchestrator, reviewer, tester)"
    )
    assert (StoredEvent.objects.count(), RunSummary.objects.count()) == before


def test_the_page_offers_the_run_agents_alone(as_owner):
    parent = run_of("first-flight")
    page = as_owner.get(f"/runs/{parent}/fork?at={read_at(parent)}")
    assert page.status_code == 200
    for box in ("agent", "to"):
        select = re.search(rf'<select name="{box}".*?</select>', page.content.decode(), re.S)
        assert select is not None, box
        offered = re.findall(r'<option value="([^"]*)"', select.group(0))
        assert offered == ["", "coder", "orchestrator", "reviewer", "tester"], box
