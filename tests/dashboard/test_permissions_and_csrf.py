"""Who may do what, and CSRF on every state change (htmx included)."""

from __future__ import annotations

import pytest
from django.test import Client

from journal_store.journal import DjangoJournal
from services import runs
from tests.dashboard.conftest import client_for, run_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]


def versions(run_id):
    return DjangoJournal().version(f"run-{run_id}"), DjangoJournal().version(f"control-{run_id}")


def test_a_non_reviewer_cannot_decide_and_nothing_is_written(as_outsider, as_owner, owner):
    parked = run_of("silent-dropout")
    before = versions(parked)
    for client in (as_outsider, as_owner):
        response = client.post(f"/review/dead-letters/{parked}:1/retry", {"reason": "let me"})
        assert response.status_code == 403
    assert versions(parked) == before
    assert runs.status_of(parked) == "dead-lettered"


def test_a_reviewer_decides_and_a_second_decision_is_already_decided(as_reviewer, reviewer):
    parked = run_of("silent-dropout")
    first = as_reviewer.post(f"/review/dead-letters/{parked}:1/discard", {"reason": "obsolete"})
    assert first.status_code == 302
    other = client_for(reviewer).post(f"/review/dead-letters/{parked}:1/retry", {"reason": "wait"})
    assert other.status_code == 409
    assert b"already been decided (discarded by reviewer)" in other.content  # who, and how
    assert [r.event.kind for r in DjangoJournal().read(f"run-{parked}")].count(
        "DeadLetterDiscarded"
    ) == 1


def test_a_decision_needs_a_reason(as_reviewer):
    parked = run_of("silent-dropout")
    assert (
        as_reviewer.post(f"/review/dead-letters/{parked}:1/retry", {"reason": ""}).status_code
        == 400
    )
    assert runs.status_of(parked) == "dead-lettered"


def test_only_the_starter_or_a_reviewer_may_interrupt_a_run(as_outsider, as_owner, as_reviewer):
    run_id = run_of("first-flight", steps=1)
    assert as_outsider.post(f"/runs/{run_id}/interrupt", {"reason": "mine now"}).status_code == 403
    assert DjangoJournal().version(f"control-{run_id}") == 0
    assert as_owner.post(f"/runs/{run_id}/interrupt", {"reason": "wrong repo"}).status_code == 302
    assert as_reviewer.post(f"/runs/{run_id}/resume", {"reason": "right repo"}).status_code == 302
    kinds = [r.event.kind for r in DjangoJournal().read(f"control-{run_id}")]
    assert kinds == ["StopRequested", "ResumeRequested"]


def test_interrupting_a_finished_run_is_a_conflict(as_owner, done_run):
    response = as_owner.post(f"/runs/{done_run}/interrupt", {"reason": "late"})
    assert response.status_code == 409 and b"already finished" in response.content


def test_posts_without_a_csrf_token_are_refused(owner):
    run_id = run_of("first-flight", steps=1)
    strict = client_for(owner, enforce_csrf_checks=True)
    assert strict.post(f"/runs/{run_id}/interrupt", {"reason": "x"}).status_code == 403
    assert (
        strict.post("/runs/new", {"team": "repo-fix", "scenario": "first-flight"}).status_code
        == 403
    )
    assert DjangoJournal().version(f"control-{run_id}") == 0


def test_an_htmx_post_carries_the_token_the_page_put_in_its_headers(owner):
    run_id = run_of("first-flight", steps=1)
    strict = client_for(owner, enforce_csrf_checks=True)
    page = strict.get(f"/runs/{run_id}/").content.decode()
    token = page.split('"X-CSRFToken": "', 1)[1].split('"', 1)[0]
    response = strict.post(
        f"/runs/{run_id}/interrupt", {"reason": "x"}, HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 200 and response["HX-Refresh"] == "true"


def test_the_api_refuses_a_session_post_without_csrf_but_takes_a_bearer_token(owner, token):
    run_id = run_of("first-flight", steps=1)
    strict = client_for(owner, enforce_csrf_checks=True)
    refused = strict.post(
        f"/api/runs/{run_id}/interrupt", {"reason": "x"}, content_type="application/json"
    )
    assert refused.status_code == 403
    anonymous = Client().post(
        f"/api/runs/{run_id}/interrupt", {"reason": "x"}, content_type="application/json"
    )
    assert anonymous.status_code == 401
    # Nobody signed in is 401 with CSRF checked too (a script's curl), not the CSRF check's
    # 403; and so is a wrong token.
    for headers in ({}, {"HTTP_AUTHORIZATION": "Bearer mt_wrong"}):
        nobody = Client(enforce_csrf_checks=True).post(
            f"/api/runs/{run_id}/interrupt",
            {"reason": "x"},
            content_type="application/json",
            **headers,
        )
        assert nobody.status_code == 401, nobody.content
    bearer = Client(enforce_csrf_checks=True).post(
        f"/api/runs/{run_id}/interrupt",
        {"reason": "script"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert bearer.status_code == 202
    assert [r.event.kind for r in DjangoJournal().read(f"control-{run_id}")] == ["StopRequested"]


def test_a_wrong_token_is_refused(db):
    response = Client().get("/api/runs", HTTP_AUTHORIZATION="Bearer mt_not-a-token")
    assert response.status_code == 401
