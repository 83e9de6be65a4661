"""interrupt_run and resume_run steer a run as the pages and the API do: the same words, the
same recorded reason, the same refusal of a finished run."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime.events import ResumeRequested, StopRequested
from services import runs
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db


def said(command: str, *args: str, **options: str) -> str:
    out = io.StringIO()
    call_command(command, *args, stdout=out, **options)
    return out.getvalue().strip()


def test_the_commands_say_what_the_api_says_and_record_the_reason_as_a_page_does(
    api_client, done_run
):
    run_id = run_of("first-flight", steps=1)
    stop = said("interrupt_run", run_id, reason="  wrong repository \n", by="ann")
    go = said("resume_run", run_id, reason="right one now", by="bob")
    requests = [r.event for r in DjangoJournal().read(f"control-{run_id}")]
    stops = [e for e in requests if isinstance(e, StopRequested | ResumeRequested)]
    assert [(type(e), e.by, e.reason) for e in stops] == [
        (StopRequested, "ann", "wrong repository"),
        (ResumeRequested, "bob", "right one now"),
    ]
    api_stop = api_client.post(f"/api/runs/{run_id}/interrupt", {}, content_type="application/json")
    api_go = api_client.post(f"/api/runs/{run_id}/resume", {}, content_type="application/json")
    assert (stop, go) == (api_stop.json()["detail"], api_go.json()["detail"])
    assert stop == f"{run_id} will stop at its next turn boundary" and go == f"{run_id} resumes"
    before = StoredEvent.objects.count()
    for command in ("interrupt_run", "resume_run"):
        with pytest.raises(CommandError, match=r"has already finished \(done\)"):
            said(command, done_run)
    assert StoredEvent.objects.count() == before


@pytest.fixture
def api_client(token):
    from django.test import Client

    return Client(HTTP_AUTHORIZATION=f"Bearer {token}")


def test_a_reason_holding_escape_sequences_is_quoted_plain(api_client):
    """A stop's reason is anybody's words. The API refuses a control in it now (one rule for
    written words, runtime/written.py), but a journal written before, or imported, may hold
    one: quoted by interrupt_run's refusal of a second stop, its escape sequences retitled and
    cleared the terminal reading it."""
    run_id = run_of("first-flight", steps=1)
    hostile = "x\x1b]0;pwned\x07\x1b[2Jy"
    asked = api_client.post(
        f"/api/runs/{run_id}/interrupt", {"reason": hostile}, content_type="application/json"
    )
    assert asked.status_code == 400, asked.content
    assert "control character (U+001B)" in asked.json()["detail"]
    runs.interrupt(run_id, "ann", hostile)  # as an older journal holds it
    with pytest.raises(CommandError) as refused:
        call_command("interrupt_run", run_id, reason="again", by="ann")
    message = str(refused.value)
    assert "\x1b" not in message and "\x07" not in message
    assert "x\\x1b]0;pwned\\x07\\x1b[2Jy" in message
