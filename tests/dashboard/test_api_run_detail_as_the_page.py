"""GET /api/runs/RUN says what the run's page says of it: the answer a fan-out team composed
(degraded or not, and what it rests on), whether it ran without the sandbox, where an imported
run came from, and its forks; and GET /api/runs?parent=RUN lists every fork. A script had to
dig each of them out of the events."""

from __future__ import annotations

from pathlib import Path

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.transfer import import_journal
from runtime.jsonl import JsonlJournal
from services import forks
from tests.dashboard.conftest import run_of
from tests.journal_store.test_projection_matches_views import store

pytestmark = pytest.mark.django_db(transaction=True)
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "journals"


def test_an_imported_run_says_where_it_came_from(api):
    with (FIXTURES / "repo-fix.v1.jsonl").open("rb") as source:
        [run_id] = import_journal(source, name="fix.jsonl", by="rosa").run_ids
    projection.catch_up()
    detail = api.get(f"/api/runs/{run_id}").json()
    assert detail["origin"]["file"] == "fix.jsonl" and detail["origin"]["by"] == "rosa"
    assert detail["unsandboxed"] is False and detail["forks"] == [] and detail["answer"] is None


def test_a_triage_run_says_its_answer(api, fly_team):
    flown = fly_team("refund-saga", team="support-triage")
    store("default", JsonlJournal(flown.path).read_all())
    detail = api.get(f"/api/runs/{flown.run_id}").json()
    [composed] = [
        r.event for r in JsonlJournal(flown.path).read_all() if r.event.kind == "AnswerComposed"
    ]
    assert detail["answer"] == {
        "text": composed.text,
        "degraded": composed.degraded,
        "sources": composed.sources,
    }
    assert detail["origin"] is None


@pytest.mark.slow
def test_a_runs_forks_are_listed_in_its_detail_and_by_parent(api, owner):
    parent = run_of("first-flight")
    verdict = next(
        r.position
        for r in DjangoJournal().read(f"run-{parent}")
        if r.event.kind == "MessageSent" and r.event.performative.lower() in ("accept", "reject")
    )
    children = [forks.fork_run(parent, verdict, forks.Changes(), "owner") for _ in range(2)]
    projection.catch_up()
    detail = api.get(f"/api/runs/{parent}").json()
    assert {f["run_id"] for f in detail["forks"]} == set(children)
    assert all(f["fork_at"] == verdict and f["imported"] is False for f in detail["forks"])
    assert detail["answer"] is None and detail["origin"] is None
    listed = api.get(f"/api/runs?parent={parent}").json()
    assert {r["run_id"] for r in listed["items"]} == set(children)
    refused = api.get("/api/runs?parent=../x")
    assert refused.status_code == 422 and refused.json()["detail"][0]["loc"] == ["query", "parent"]


def test_a_run_started_without_the_sandbox_says_so(api):
    from runtime.events import TeamStarted

    for run_id, sandbox in (("r-00000nosandbox", False), ("r-0000000sandbox", True)):
        started = TeamStarted(
            run_id=run_id, team="solo", scenario="solo-fix", task="t", config={"sandbox": sandbox}
        )
        DjangoJournal().append(f"run-{run_id}", [started], 0)
    projection.catch_up()
    assert api.get("/api/runs/r-00000nosandbox").json()["unsandboxed"] is True
    assert api.get("/api/runs/r-0000000sandbox").json()["unsandboxed"] is False
