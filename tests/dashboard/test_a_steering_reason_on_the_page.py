"""A stop's or a resume's reason posted by the run's page (or given to the command line) is
held to what the API's body takes: the page read it unchecked, journalled a NUL (PostgreSQL's
text has none: every projector reading it stopped) and cut one past 2,000 characters in
silence. Refused now, saying why, with nothing written."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from services import runs
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        ("wrong\x00repository", "the reason holds a NUL character (U+0000) at character 6"),
        ("r" * 2_001, "the reason is 2,001 characters; at most 2,000"),
    ],
)
@pytest.mark.parametrize("action", ["interrupt", "resume"])
def test_the_pages_stop_and_resume_refuse_a_reason_the_api_refuses(as_owner, reason, said, action):
    run_id = run_of("first-flight", steps=1)
    if action == "resume":
        runs.interrupt(run_id, "owner", "a stop the resume would lift")
    before = StoredEvent.objects.count()
    answer = as_owner.post(f"/runs/{run_id}/{action}", {"reason": reason})
    assert answer.status_code == 400
    assert said in answer.content.decode()
    assert StoredEvent.objects.count() == before


def test_the_command_refuses_a_reason_that_is_not_text(owner):
    """An argument that is not UTF-8 reaches the command as half a UTF-16 pair."""
    run_id = run_of("first-flight", steps=1)
    before = StoredEvent.objects.count()
    with pytest.raises(CommandError, match=r"half a UTF-16 surrogate pair \(U\+DCFF alone\)"):
        call_command("interrupt_run", run_id, reason="why\udcff", by="ann")
    assert StoredEvent.objects.count() == before


def test_a_reason_within_bounds_is_recorded_trimmed(as_owner, api):
    """By the page and by the API alike: the API measured the reason before trimming it, and
    refused (422) the one the page took."""
    padded = "  " + "r" * 2_000 + " \n"
    run_id = run_of("first-flight", steps=1)
    answer = as_owner.post(f"/runs/{run_id}/interrupt", {"reason": padded})
    assert answer.status_code == 302
    [stop] = [r.event for r in DjangoJournal().read(f"control-{run_id}")]
    assert stop.reason == "r" * 2_000
    other = run_of("first-flight", steps=1)
    answer = api.post(
        f"/api/runs/{other}/interrupt", {"reason": padded}, content_type="application/json"
    )
    assert answer.status_code == 202, answer.content
    [stop] = [r.event for r in DjangoJournal().read(f"control-{other}")]
    assert stop.reason == "r" * 2_000
