"""A stop asked of a running run is said in its header until the run reaches it (who asked,
why, escaped), with a way to go on instead; the page used to say only "running" until the
next turn boundary, and offered Interrupt again."""

from __future__ import annotations

import pytest

from services import runs
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db


def header(client, run_id: str) -> str:
    return client.get(f"/runs/{run_id}/header", HTTP_HX_REQUEST="true").content.decode()


def test_a_pending_stop_is_said_with_who_and_why_until_it_is_lifted(as_owner):
    run_id = run_of("first-flight", steps=1)
    before = header(as_owner, run_id)
    assert "stopping" not in before and ">Interrupt</button>" in before
    asked = as_owner.post(
        f"/runs/{run_id}/interrupt", {"reason": "<b>wrong</b> repo"}, HTTP_HX_REQUEST="true"
    )
    assert asked.status_code == 200  # the page is refreshed
    shown = header(as_owner, run_id)
    assert "owner asked it to stop" in shown
    assert "&lt;b&gt;wrong&lt;/b&gt; repo" in shown and "<b>wrong</b>" not in shown
    assert ">Interrupt</button>" not in shown and "Go on instead" in shown
    assert runs.status_of(run_id) == "running"  # not reached yet
    assert as_owner.post(f"/runs/{run_id}/resume", {}, HTTP_HX_REQUEST="true").status_code == 200
    after = header(as_owner, run_id)
    assert "asked it to stop" not in after and ">Interrupt</button>" in after


def test_the_api_says_the_pending_stop_of_one_run(token):
    from django.test import Client

    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    run_id = run_of("first-flight", by="rosa", steps=1)
    assert api.get(f"/api/runs/{run_id}").json()["stop_requested"] is None
    runs.interrupt(run_id, "ann", "wrong repo")
    assert api.get(f"/api/runs/{run_id}").json()["stop_requested"] == {
        "by": "ann",
        "reason": "wrong repo",
    }
    runs.resume(run_id, "ann", "right one after all")
    assert api.get(f"/api/runs/{run_id}").json()["stop_requested"] is None


def test_a_stop_that_would_change_nothing_is_refused_and_nothing_is_written(token):
    from django.test import Client

    from journal_store import projection
    from journal_store.journal import DjangoJournal
    from journal_store.models import StoredEvent
    from runtime.events import DeadLettered
    from services.steps import drive_step

    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")

    def stop(run_id: str):
        before = StoredEvent.objects.count()
        answer = api.post(f"/api/runs/{run_id}/interrupt", {}, content_type="application/json")
        assert StoredEvent.objects.count() == before
        return answer.status_code, answer.json()["detail"]

    asked = run_of("first-flight", by="rosa", steps=1)
    runs.interrupt(asked, "ann", "wrong repo")
    code, said = stop(asked)
    assert code == 409 and said.startswith(f"run {asked} was asked to stop already, by ann at ")
    assert said.endswith(" UTC (wrong repo): nothing was changed")
    assert drive_step(asked, "test") == "interrupted"
    assert runs.status_of(asked) == "interrupted"
    assert stop(asked)[0] == 409 and "is interrupted already (resume it to go on)" in stop(asked)[1]

    lettered = run_of("first-flight", by="rosa", steps=1)
    stream = f"run-{lettered}"
    letter = DeadLettered(run_id=lettered, letter_id=f"{lettered}:1", reason="x", attempts=3)
    DjangoJournal().append(stream, [letter], DjangoJournal().version(stream))
    projection.catch_up()
    assert stop(lettered)[0] == 409 and "retry or discard it" in stop(lettered)[1]
