"""The run's header and list row tell the truth: a conflict's run waits for a person until the
conflict is decided, a refund undone reads "compensated", and an imported run names its file,
keeps its journal's times, and offers no Interrupt."""

from __future__ import annotations

import io
import json
import re

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoredEvent
from journal_store.transfer import import_journal
from tests.dashboard.conftest import drive

pytestmark = pytest.mark.django_db


def test_a_conflicts_run_waits_for_a_person_and_says_so_no_more_once_it_is_decided(
    api, as_reviewer
):
    started = api.post(
        "/api/runs",
        {"team": "support-desk", "scenario": "lost-update", "order": "A-4471"},
        content_type="application/json",
    )
    run_id = started.json()["run_id"]
    drive(run_id)
    projection.catch_up()
    assert RunSummary.objects.get(run_id=run_id).status == "waiting"
    page = as_reviewer.get(f"/runs/{run_id}/").content.decode()
    assert "waiting for a person" in page and "waits for a person" in page
    [conflict] = api.get("/api/review/conflicts").json()["items"]
    cancel = next(c["claim_id"] for c in conflict["claims"] if c["value"] == "cancelled")
    api.post(
        f"/api/review/conflicts/{conflict['conflict_id']}/resolve",
        {"choice": cancel, "reason": "asked before dispatch"},
        content_type="application/json",
    )
    header = as_reviewer.get(f"/runs/{run_id}/header").content.decode()
    assert "resolved by a person" in header
    assert "waits for a person" not in header and "waiting for a person" not in header
    assert "resolved by reviewer: &#x27;cancelled&#x27;" in header
    assert api.get(f"/api/runs/{run_id}").json()["status"] == "resolved"


def test_a_refund_saga_that_was_undone_ends_compensated_with_its_steps_in_the_audit(
    api, as_owner, monkeypatch
):
    from services import specialists

    # A surface of this test's own: the process's shared one keeps its orders book (and its
    # servers' state) in the workspace of whichever test first asked for it.
    monkeypatch.setattr(specialists, "_surface", None)
    monkeypatch.setattr(
        specialists,
        "dispatch",
        lambda run, sub, handoff: specialists.run_specialist(run, sub, "inline"),
    )
    from services import runs

    # A deadline no busy machine misses: the specialists' reports, not a timeout, are the point.
    run_id = runs.start_run("support-triage", "refund-saga", by="owner", deadline=300)
    drive(run_id)
    projection.catch_up()
    assert RunSummary.objects.get(run_id=run_id).status == "compensated"
    row = as_owner.get(f"/runs/{run_id}/row").content.decode()
    assert "undone (compensated)" in row and ">done<" not in row
    audit = [
        (a["what"], a["detail"].get("step")) for a in api.get(f"/api/runs/{run_id}/audit").json()
    ]
    assert [a for a in audit if a[0].startswith("Saga")] == [
        ("SagaStepCompleted", "label"),
        ("SagaStepCompleted", "credit"),
        ("SagaAborted", "record"),
        ("SagaCompensating", "credit"),
        ("SagaCompensated", "credit"),
        ("SagaCompensating", "label"),
        ("SagaCompensated", "label"),
    ]
    kinds = [f["kind"] for f in api.get(f"/api/runs/{run_id}/findings").json()]
    assert "breaker_tripped" in kinds and "saga_compensated" in kinds
    specialists._surface.close()


def journal_file(run_id: str) -> bytes:
    """A reference runtime's flat journal: no TeamStarted, no verdict."""
    lines = [
        {
            "kind": "RunStarted",
            "run_id": run_id,
            "agent": "coder",
            "task": "fix it",
            "t": 1_700_000_000.0,
        },
        {
            "kind": "AgentFinished",
            "run_id": run_id,
            "agent": "coder",
            "result": {"ok": True},
            "t": 1_700_000_042.0,
        },
    ]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_an_imported_run_names_its_file_keeps_its_times_and_offers_no_interrupt(as_owner, api):
    body = journal_file("legacy-1")
    import_journal(io.BytesIO(body), name="/home/ann/old run.jsonl", size=len(body), by="owner")
    projection.catch_up()
    run = RunSummary.objects.get(run_id="legacy-1")
    assert run.status == "imported" and run.started_by == "owner"
    page = as_owner.get("/runs/legacy-1/").content.decode()
    assert 'Imported from <span class="mono">old run.jsonl</span> by owner' in page
    assert "42 s" in page  # the journal's own first and last times, not a clock still counting
    assert "Interrupt" not in page and "Check replay" not in page
    before = StoredEvent.objects.count()
    refused = api.post("/api/runs/legacy-1/interrupt", {}, content_type="application/json")
    assert refused.status_code == 409 and "imported" in refused.json()["detail"]
    assert StoredEvent.objects.count() == before
    # The note of the import is this server's: not exported, so the export imports again.
    exported = b"".join(api.get("/api/runs/legacy-1/export").streaming_content)
    assert b"JournalImported" not in exported
    again = import_journal(io.BytesIO(exported), name="again.jsonl", run_id="legacy-2", by="owner")
    assert again.added == 2
    assert [r.event.file for r in DjangoJournal().read("import-legacy-2")] == ["again.jsonl"]


def test_an_imported_runs_timeline_does_not_promise_a_resume(as_owner):
    body = journal_file("legacy-3")
    import_journal(io.BytesIO(body), name="old.jsonl", size=len(body), by="owner")
    projection.catch_up()
    page = as_owner.get("/runs/legacy-3/?tab=timeline").content.decode()
    assert "nothing here drives it" in page  # the header
    assert "Resume point: stage" in page
    assert "nothing here resumes an imported run" in page
    assert "replays up to there" not in page
    # The tab alone, as its filters fetch it, says the same.
    tab = as_owner.get(
        "/runs/legacy-3/tabs/timeline", headers={"HX-Request": "true", "HX-Target": "tab"}
    ).content.decode()
    assert "nothing here resumes an imported run" in tab and "replays up to there" not in tab


def test_a_conflict_reads_by_its_values_marks_the_winner_and_links_both_ways(api, as_reviewer):
    started = api.post(
        "/api/runs",
        {"team": "support-desk", "scenario": "lost-update", "order": "A-77"},
        content_type="application/json",
    )
    run_id = started.json()["run_id"]
    drive(run_id)
    [conflict] = api.get("/api/review/conflicts").json()["items"]
    cid = conflict["conflict_id"]
    queue = as_reviewer.get("/review/conflicts").content.decode()
    assert "commit &quot;cancelled&quot;" in queue and "commit &quot;shipped&quot;" in queue
    assert "commit claim cl-" not in queue
    assert f'href="/runs/{run_id}/"' in queue  # the item links to its run...
    header = as_reviewer.get(f"/runs/{run_id}/").content.decode()
    # ...and the run to its item, among the run's own (a first page of every run's may not
    # hold it)
    assert f'href="/review/conflicts?status=all&amp;run={run_id}#{cid}"' in header
    assert f'id="{cid}"' in queue
    cancel = next(c["claim_id"] for c in conflict["claims"] if c["value"] == "cancelled")
    card = as_reviewer.post(
        f"/review/conflicts/{cid}/resolve",
        {"choice": cancel, "reason": "asked before dispatch"},
        headers={"HX-Request": "true"},
    )
    # The card comes back decided, in place of the one the form was in.
    assert card["HX-Retarget"] == "closest section" and card["HX-Reswap"] == "outerHTML"
    html = card.content.decode()
    assert html.lstrip().startswith(f'<section class="card" id="{cid}"')
    assert 'class="card chosen"' in html and "open</span>" not in html
    assert f"resolution recorded for {cid}" in html
    decided = as_reviewer.get("/review/conflicts?status=all").content.decode()
    assert "chose &quot;cancelled&quot;" in decided
    chosen = re.search(r'<div class="card chosen"[^>]*>\s*<h3>([^<]+)', decided)
    assert chosen and chosen.group(1).strip() == "&quot;cancelled&quot;"
