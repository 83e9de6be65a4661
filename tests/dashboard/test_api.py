"""The JSON API: every endpoint of the design, its schemas, paging, errors and permissions."""

from __future__ import annotations

import io
import json

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime.events import ConflictParked
from services import review, runs
from tests.dashboard.conftest import client_for, run_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]


def test_runs_list_pages_and_filters(api, owner):
    done = run_of("first-flight")
    parked = run_of("silent-dropout")
    page = api.get("/api/runs?limit=1").json()
    assert len(page["items"]) == 1 and page["next"]
    rest = api.get("/api/runs", {"limit": 1, "after": page["next"]}).json()
    assert len(rest["items"]) == 1 and rest["next"] is None
    assert {r["run_id"] for r in page["items"] + rest["items"]} == {done, parked}
    assert [r["run_id"] for r in api.get("/api/runs?status=done").json()["items"]] == [done]
    item = api.get(f"/api/runs?q={parked}").json()["items"][0]
    assert item["status"] == "dead-lettered" and item["started_by"] == "owner"


def test_starting_a_run_gives_201_and_its_summary(api):
    response = api.post(
        "/api/runs",
        {"team": "repo-fix", "scenario": "vague-subtask"},
        content_type="application/json",
    )
    assert response.status_code == 201
    body = response.json()
    assert body["status"] == "running" and body["started_by"] == "reviewer"
    assert runs.status_of(body["run_id"]) == "running"


@pytest.mark.parametrize(
    "payload, message",
    [
        # A setting the team's plan refuses; a scenario it has not is a 422 at its field
        # (test_new_run_body_in_the_pages_words.py).
        ({"team": "repo-fix", "reflect": True}, "scripts no critic for --reflect"),
        ({"team": "support-triage", "votes": 3}, "has no voted decision"),
    ],
)
def test_bad_run_settings_are_400_with_the_reason(api, payload, message):
    response = api.post("/api/runs", payload, content_type="application/json")
    assert response.status_code == 400 and message in response.json()["detail"]


def test_a_malformed_body_is_422(api):
    response = api.post("/api/runs", {"allowance": "lots"}, content_type="application/json")
    assert response.status_code == 422


@pytest.mark.parametrize(
    "body, says",
    [
        # django-ninja answered each of these "Cannot parse request body", naming nothing.
        ('{"team": "repo-fix",\n  "task": }', "not JSON: Expecting value at line 2, column 11"),
        ('{"allowance": ' + "9" * 5000 + "}", "a whole number longer than 4,300 digits"),
        ("[" * 100_000, "nested too deeply for JSON to read"),
        (b'{"task": "caf\xe9"}', "not UTF-8 text (byte 14)"),
    ],
)
def test_a_body_that_is_not_json_is_400_saying_what_and_where(api, body, says):
    before = StoredEvent.objects.count()
    response = api.post("/api/runs", body, content_type="application/json")
    assert response.status_code == 400
    assert says in response.json()["detail"]
    assert StoredEvent.objects.count() == before


def test_a_run_and_its_minutes(api, done_run):
    assert api.get(f"/api/runs/{done_run}").json()["scenario"] == "premature-done"
    events = api.get(f"/api/runs/{done_run}/events?limit=5").json()
    assert [e["kind"] for e in events][:1] == ["TeamStarted"] and len(events) == 5
    later = api.get(
        f"/api/runs/{done_run}/events?after={events[-1]['position']}&kind=MessageSent"
    ).json()
    assert later and all(e["kind"] == "MessageSent" for e in later)
    bill = api.get(f"/api/runs/{done_run}/bill").json()
    assert bill["balanced"] and bill["spent"] == bill["total"]["tokens"]
    assert "T1" in api.get(f"/api/runs/{done_run}/threads").json()
    assert any(a["what"] == "Integrated" for a in api.get(f"/api/runs/{done_run}/audit").json())
    assert api.get(f"/api/runs/{done_run}/resume-point").json()["stage"] == "complete"
    assert [f["kind"] for f in api.get(f"/api/runs/{done_run}/findings").json()] == [
        "done_without_evidence"
    ]
    assert api.post(f"/api/runs/{done_run}/replay").json()["identical"] is True


def test_unknown_runs_are_404(api):
    for url in ["/api/runs/r-nope", "/api/runs/r-nope/bill", "/api/runs/r-nope/events"]:
        assert api.get(url).status_code == 404, url


def test_export_and_import_round_trip(api, done_run):
    response = api.get(f"/api/runs/{done_run}/export")
    body = b"".join(response.streaming_content)
    assert response["Content-Type"] == "application/x-ndjson"
    again = api.post("/api/journals", {"journal": io.BytesIO(body)})
    assert again.status_code == 200 and again.json() == {  # nothing created: all here
        "run_ids": [done_run],
        "events": len(body.splitlines()),
        "added": 0,
        "torn": None,
        "note": None,  # the read models were brought up to date after it
        "left_out": [],  # no trace pushes in an export of this version
    }


def test_a_bad_journal_imports_nothing_and_lists_the_lines(api):
    data = b'{"kind": "Nope"}\n{"kind": "BudgetDebited"}\n'
    upload = io.BytesIO(data)
    upload.name = "bad.jsonl"
    response = api.post("/api/journals", {"journal": upload})
    assert response.status_code == 400
    assert [p.split(":")[0] for p in response.json()["problems"]] == ["line 1", "line 2"]
    assert DjangoJournal().last_position() == 0


def test_interrupt_and_resume(api, owner, outsider):
    run_id = run_of("first-flight", steps=1)
    assert (
        api.post(
            f"/api/runs/{run_id}/interrupt", {"reason": "stop"}, content_type="application/json"
        ).status_code
        == 202
    )
    assert (
        api.post(
            f"/api/runs/{run_id}/resume", {"reason": "go"}, content_type="application/json"
        ).status_code
        == 202
    )
    stranger = client_for(outsider)
    assert (
        stranger.post(
            f"/api/runs/{run_id}/interrupt", {}, content_type="application/json"
        ).status_code
        == 403
    )


def test_interrupt_and_resume_need_no_body(api):
    """The reason is optional, so is the body: `curl -X POST .../interrupt` is enough. A body
    that is there is still checked: a wrong one is a 422 and nothing is journalled."""
    run_id = run_of("first-flight", steps=1)
    control = f"control-{run_id}"
    wrong = api.post(f"/api/runs/{run_id}/interrupt", "[1]", content_type="application/json")
    assert wrong.status_code == 422 and DjangoJournal().version(control) == 0
    # As `curl -X POST` sends it, and a JSON client's empty body: no bytes at all.
    bare = api.generic("POST", f"/api/runs/{run_id}/interrupt", content_type="")
    assert bare.status_code == 202, bare.content
    [asked] = [r.event for r in DjangoJournal().read(control)]
    assert asked.kind == "StopRequested" and asked.reason == ""
    empty = api.generic("POST", f"/api/runs/{run_id}/resume", content_type="application/json")
    assert empty.status_code == 202, empty.content
    assert DjangoJournal().read(control)[-1].event.kind == "ResumeRequested"


def parked_conflict(run_id: str) -> str:
    review.park(
        ConflictParked(
            run_id=run_id,
            conflict_id="c-1",
            subject="order:4471",
            predicate="status",
            conflict_type="state",
            claims=[
                {
                    "claim_id": "k1",
                    "value": "refunded",
                    "agent": "support",
                    "based_on": 3,
                    "evidence": {"tool": "payments"},
                },
                {
                    "claim_id": "k2",
                    "value": "shipped",
                    "agent": "orders",
                    "based_on": 3,
                    "evidence": {"tool": "warehouse"},
                },
            ],
        )
    )
    return "c-1"


def test_a_conflict_is_resolved_once_and_audited(api, done_run, as_outsider):
    conflict = parked_conflict(done_run)
    listed = api.get("/api/review/conflicts").json()["items"]
    assert [c["conflict_id"] for c in listed] == [conflict]
    assert (
        as_outsider.post(
            f"/api/review/conflicts/{conflict}/resolve",
            {"choice": "k1", "reason": "x"},
            content_type="application/json",
        ).status_code
        == 403
    )
    bad = api.post(
        f"/api/review/conflicts/{conflict}/resolve",
        {"choice": "k9", "reason": "x"},
        content_type="application/json",
    )
    assert bad.status_code == 400 and "no claim 'k9'" in bad.json()["detail"]
    done = api.post(
        f"/api/review/conflicts/{conflict}/resolve",
        {"choice": "k1", "reason": "the bank confirms the refund"},
        content_type="application/json",
    )
    assert done.status_code == 200 and done.json()["resolution"] == {
        "choice": "k1",
        "value": "refunded",
        "committed": None,
    }
    again = api.post(
        f"/api/review/conflicts/{conflict}/resolve",
        {"choice": "k2", "reason": "no"},
        content_type="application/json",
    )
    assert again.status_code == 409
    audit = api.get(f"/api/runs/{done_run}/audit").json()
    [entry] = [a for a in audit if a["what"] == "ConflictResolved"]
    assert (
        entry["who"] == "reviewer"
        and entry["human"]
        and entry["detail"]["why"] == "the bank confirms the refund"
    )


def test_dead_letters_are_listed_retried_and_discarded(api):
    parked = run_of("silent-dropout")
    [letter] = api.get("/api/review/dead-letters").json()["items"]
    assert letter["letter_id"] == f"{parked}:1" and letter["attempts"] == 2
    response = api.post(
        f"/api/review/dead-letters/{parked}:1/retry",
        {"reason": "again"},
        content_type="application/json",
    )
    assert response.status_code == 200 and response.json()["status"] == "retried"
    assert (
        api.post(
            f"/api/review/dead-letters/{parked}:1/discard",
            {"reason": "x"},
            content_type="application/json",
        ).status_code
        == 409
    )
    assert (
        api.post(
            f"/api/review/dead-letters/{parked}:9/retry",
            {"reason": "x"},
            content_type="application/json",
        ).status_code
        == 404
    )
    assert (
        api.post(
            f"/api/review/dead-letters/{parked}:1/maybe",
            {"reason": "x"},
            content_type="application/json",
        ).status_code
        == 422
    )


def test_the_openapi_schema_describes_every_endpoint(api):
    schema = api.get("/api/openapi.json").json()
    paths = set(schema["paths"])
    for path in [
        "/api/runs",
        "/api/runs/{run_id}",
        "/api/runs/{run_id}/events",
        "/api/runs/{run_id}/bill",
        "/api/runs/{run_id}/threads",
        "/api/runs/{run_id}/audit",
        "/api/runs/{run_id}/resume-point",
        "/api/runs/{run_id}/findings",
        "/api/runs/{run_id}/export",
        "/api/journals",
        "/api/runs/{run_id}/interrupt",
        "/api/runs/{run_id}/resume",
        "/api/review/conflicts",
        "/api/review/conflicts/{conflict_id}/resolve",
        "/api/review/dead-letters",
        "/api/review/dead-letters/{letter_id}/{decision}",
    ]:
        assert path in paths, path
    assert json.dumps(schema)  # serializable


def test_the_body_the_docs_offer_for_a_new_run_starts_one(api):
    """The API docs' "Try it out" drew its sample from the types alone:
    {"scenario": "string", "task": "string", ...}, a 422 for both."""
    schema = api.get("/api/openapi.json").json()
    body = schema["paths"]["/api/runs"]["post"]["requestBody"]["content"]["application/json"]
    ref = body["schema"]["$ref"].rsplit("/", 1)[-1]
    sample = schema["components"]["schemas"][ref]["example"]
    started = api.post("/api/runs", sample, content_type="application/json")
    assert started.status_code in (201, 202), started.content
