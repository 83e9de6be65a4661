"""The API answers a refusal by its type, through a handler registered for it: 404 for what is
not there, 409 for what has moved on, 403 for who may not, 400 for what was asked wrongly.
One test per route family, each checking that nothing was written."""

from __future__ import annotations

import io

import pytest
from django.test import RequestFactory

from dashboard import errors
from dashboard.api import api as minutes_api
from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from journal_store.transfer import ImportRefused, import_journal
from runtime.coordination.gates import Intents
from services import conflict_errors, intents, review, runs
from tests.dashboard.conftest import client_for
from tests.dashboard.test_api import parked_conflict

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]


def post(client, url, body):
    return client.post(url, body, content_type="application/json")


@pytest.mark.parametrize("refusal", list(errors.REFUSALS), ids=lambda c: c.__name__)
def test_every_refusal_type_has_a_handler_answering_its_status_and_message(refusal):
    exc = refusal.__new__(refusal)
    Exception.__init__(exc, f"refused as a {refusal.__name__}")
    response = minutes_api.on_exception(RequestFactory().get("/api/runs"), exc)
    assert response.status_code == errors.REFUSALS[refusal]
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert response.content.decode() == f'{{"detail": "refused as a {refusal.__name__}"}}'


def test_runs_refusals_are_answered_by_type(api, done_run):
    before = StoredEvent.objects.count()
    with pytest.raises(runs.RunNotFound):
        runs.interrupt("r-nope", "reviewer")
    with pytest.raises(runs.RunFinished):
        runs.interrupt(done_run, "reviewer")
    for url in ("/api/runs/r-nope", "/api/runs/r-nope/audit", "/api/runs/r-nope/export"):
        missing = api.get(url)
        assert missing.status_code == 404 and missing.json() == {"detail": "no run r-nope"}
    refused = post(api, "/api/runs/r-nope/resume", {"reason": "go"})
    assert refused.status_code == 404 and refused.json() == {"detail": "no run r-nope"}
    finished = post(api, f"/api/runs/{done_run}/interrupt", {"reason": "stop"})
    assert finished.status_code == 409
    assert finished.json() == {"detail": f"run {done_run} has already finished (done)"}
    bad = post(api, "/api/runs", {"team": "repo-fix", "reflect": True})
    assert bad.status_code == 400 and "scripts no critic" in bad.json()["detail"]
    assert StoredEvent.objects.count() == before


def test_review_refusals_are_answered_by_type(api, outsider, done_run):
    conflict = parked_conflict(done_run)
    before = StoredEvent.objects.count()
    with pytest.raises(conflict_errors.ConflictNotFound):
        review.resolve("c-nope", "k1", "reviewer", "why")
    missing = post(api, "/api/review/conflicts/c-nope/resolve", {"choice": "k1", "reason": "x"})
    assert missing.status_code == 404
    assert missing.json() == {"detail": "no parked conflict c-nope"}
    letter = post(api, f"/api/review/dead-letters/{done_run}:9/retry", {"reason": "x"})
    assert letter.status_code == 404
    assert letter.json() == {"detail": f"no dead letter {done_run}:9"}
    stranger = post(
        client_for(outsider),
        f"/api/review/conflicts/{conflict}/resolve",
        {"choice": "k1", "reason": "x"},
    )
    assert stranger.status_code == 403
    assert stranger.json() == {"detail": "deciding on review items needs the reviewer permission"}
    wrong = post(api, f"/api/review/conflicts/{conflict}/resolve", {"choice": "k9", "reason": "x"})
    assert wrong.status_code == 400 and "no claim 'k9'" in wrong.json()["detail"]
    assert StoredEvent.objects.count() == before
    assert post(api, f"/api/review/conflicts/{conflict}/resolve", {"choice": "k1", "reason": "x"})
    decided = StoredEvent.objects.count()
    again = post(api, f"/api/review/conflicts/{conflict}/resolve", {"choice": "k2", "reason": "y"})
    assert again.status_code == 409
    assert again.json() == {
        "detail": f"conflict {conflict} has already been decided by reviewer, who chose "
        "'refunded' (claim k1) for the reason 'x'"
    }
    assert StoredEvent.objects.count() == decided


def test_journal_refusals_are_answered_by_type_with_every_problem(api):
    bad = b'{"kind": "Nope"}\nnot json\n'
    with pytest.raises(ImportRefused):
        import_journal(io.BytesIO(bad), name="bad.jsonl", size=len(bad), by="reviewer")
    upload = io.BytesIO(bad)
    upload.name = "bad.jsonl"
    response = api.post("/api/journals", {"journal": upload})
    assert response.status_code == 400
    body = response.json()
    assert body["detail"] == "nothing was imported" and body["more"] == 0
    assert [p.split(":")[0] for p in body["problems"]] == ["line 1", "line 2"]
    schema = api.get("/api/openapi.json").json()
    refusal = schema["paths"]["/api/journals"]["post"]["responses"]["400"]
    assert refusal["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ImportRefusedOut"
    }
    assert StoredEvent.objects.count() == 0


def test_intent_refusals_are_answered_by_type(api):
    Intents(DjangoJournal()).declare("ticket-9", "refund it", "desk", "the customer asked")
    before = StoredEvent.objects.count()
    with pytest.raises(intents.IntentMissing):
        intents.page("ticket-nobody")
    missing = api.get("/api/intents/ticket-nobody")
    assert missing.status_code == 404 and "no intent ticket-nobody" in missing.json()["detail"]
    change = {"statement": "replace it", "reason": "they called", "version": 5}
    moved = post(api, "/api/intents/ticket-9", change)
    assert moved.status_code == 409 and "at version 1, not 5" in moved.json()["detail"]
    blank = post(api, "/api/intents/ticket-9", {**change, "version": 1, "statement": " "})
    assert blank.status_code == 422  # refused at the body, naming the field
    assert [e["loc"][-1] for e in blank.json()["detail"]] == ["statement"]
    with pytest.raises(intents.IntentError, match="needs a statement"):  # commands meet this
        intents.supersede("ticket-9", " ", "someone", "they called", 1)
    assert StoredEvent.objects.count() == before
    # Nobody superseded it: it never had a version 5, and the answer said they had.
    assert "it has had no version 5" in moved.json()["detail"]
    assert "since you looked" not in moved.json()["detail"]
    superseded = Intents(DjangoJournal()).declare(
        "ticket-9", "replace it", "desk", "they called", based_on=1
    )
    stale = post(api, "/api/intents/ticket-9", {**change, "version": 1})
    assert stale.status_code == 409
    assert (
        f"at version {superseded.version}, not 1: somebody superseded it" in stale.json()["detail"]
    )
    # Not a version at all: the field named, as any value out of range is.
    for version in (0, -1):
        answer = post(api, "/api/intents/ticket-9", {**change, "version": version})
        assert answer.status_code == 422 and answer.json()["detail"][0]["loc"][-1] == "version"
    assert StoredEvent.objects.count() == before + 1  # the one declared here


def test_a_huge_choice_or_agent_is_refused_without_being_echoed_whole(api, done_run):
    """A 100,000-character choice came back whole in the 400, and a fork's `models` key of
    50,000 characters in its refusal: a choice is at most 64 characters, as the form's, an
    agent's name too, and a refusal quotes what was sent cut short."""
    conflict = parked_conflict(done_run)
    before = StoredEvent.objects.count()
    huge = post(
        api, f"/api/review/conflicts/{conflict}/resolve", {"choice": "k" * 100_000, "reason": "x"}
    )
    [problem] = huge.json()["detail"]
    assert huge.status_code == 422 and problem["loc"] == ["body", "choice"]
    assert len(huge.content) < 2_000
    long = post(
        api, f"/api/review/conflicts/{conflict}/resolve", {"choice": "k" * 64, "reason": "x"}
    )
    assert long.status_code == 400 and len(long.content) < 500, long.content
    cut = "'" + "k" * 55 + "...'"  # quoted short (runtime.events.shown), not whole
    assert f"conflict {conflict} has no claim {cut}; choose one of" in long.json()["detail"]
    at = StoredEvent.objects.filter(stream=f"run-{done_run}").order_by("position")[2].position
    for models in ({"k" * 50_000: "scripted"}, {"k" * 50_000: "nope"}):
        fork = post(api, f"/api/runs/{done_run}/fork", {"at": at, "models": models})
        [problem] = fork.json()["detail"]
        assert fork.status_code == 422 and problem["loc"] == ["body", "models"], fork.content
        assert problem["msg"].endswith(": an agent's name is at most 64 characters")
        assert len(fork.content) < 2_000
    unknown = post(api, f"/api/runs/{done_run}/fork", {"at": at, "models": {"k" * 64: "zi"}})
    assert unknown.status_code == 400 and len(unknown.content) < 500, unknown.content
    assert f"models: the run has no agent {cut} (it has" in unknown.json()["detail"]
    assert StoredEvent.objects.count() == before
