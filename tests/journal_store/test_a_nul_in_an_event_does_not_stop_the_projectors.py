"""A NUL character in an event's strings (a tool that printed a binary file's bytes, a reason
sent before the API refused one) is journalled as written, but the read models hold U+FFFD in
its place: PostgreSQL's text has no NUL, and a projector that met one failed on it at every
catch-up after, stopping every page for every run."""

from __future__ import annotations

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import AuditEntry, StoredEvent, ThreadMessage
from runtime import events as ev
from tests.journal_store.conftest import on_every_backend


@pytest.fixture
def journalled(alias):
    started = ev.TeamStarted(run_id="r-nul", team="solo", scenario="solo-fix", task="t")
    read = ev.ToolReturned(
        run_id="r-nul", agent="coder", tool="read_file", result="PK\x03\x04\x00\x00 and a \\u0000"
    )
    sent = ev.MessageSent(
        run_id="r-nul",
        sender="coder",
        recipient="reviewer",
        task_id="T1",
        performative="request",
        payload={"text": "see\x00this"},
    )
    stop = ev.RunInterrupted(run_id="r-nul", by="someone", reason="because\x00")
    DjangoJournal(alias).append("run-r-nul", [started, read, sent, stop], 0)
    return alias


@on_every_backend(transaction=True)
def test_the_projectors_catch_up_past_it_and_show_a_replacement_character(journalled):
    alias = journalled
    projection.catch_up(using=alias)
    assert projection.behind(alias) == dict.fromkeys(projection.PROJECTORS, 0)
    audit = list(AuditEntry.objects.using(alias).filter(run_id="r-nul").values())
    messages = list(ThreadMessage.objects.using(alias).filter(run_id="r-nul").values())
    shown = repr(audit) + repr(messages)
    assert "\x00" not in shown and "\ufffd" in shown
    # The journal keeps what was written, and an escaped backslash before "u0000" is text.
    stored = StoredEvent.objects.using(alias).get(run_id="r-nul", kind="ToolReturned").data
    assert "\\u0000" in stored and "\\\\u0000" in stored
