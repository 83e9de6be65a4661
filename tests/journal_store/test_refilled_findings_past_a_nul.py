"""The data migrations that fill in a new finding from stored events (journal_store/refill.py
`findings`) write what the projector would: U+FFFD where the events held NUL characters
(journal_store/nul.py). They read the journal themselves, not through the projector's read,
and on PostgreSQL a finding's summary holding a NUL failed the migration."""

from __future__ import annotations

from django.apps import apps

from journal_store import projection, refill
from journal_store.journal import DjangoJournal
from journal_store.models import Finding, RunState
from runtime import events as ev
from runtime.signatures.agents import NoToolCalls
from tests.conftest import on_every_backend

RUN = "r-refill"


def columns(alias: str) -> list[dict]:
    found = Finding.objects.using(alias).filter(run_id=RUN, kind="no_tool_call")
    return list(found.values("kind", "key", "summary", "positions", "detail"))


@on_every_backend(transaction=True)
def test_a_refilled_finding_is_the_one_the_projector_made(alias):
    r = {"run_id": RUN}
    events = [
        ev.TeamStarted(**r, team="solo", scenario="solo-fix", task="t"),
        ev.MessageSent(
            **r, sender="lead\x00", recipient="coder", task_id="T1", performative="request"
        ),
        ev.RunInconclusive(**r, agent="coder", task_id="T1", turn=2, reason="drift\x00 \\u0000"),
    ]
    DjangoJournal(alias).append(f"run-{RUN}", events, 0)
    projection.catch_up(using=alias)
    projected = columns(alias)
    assert len(projected) == 1 and "drift\ufffd \\u0000" in projected[0]["summary"]
    # As before a migration that brings the finding in: neither its rows nor its state.
    Finding.objects.using(alias).filter(run_id=RUN, kind="no_tool_call").delete()
    RunState.objects.using(alias).filter(run_id=RUN, fold="no_tool_call").delete()
    refill.findings(apps, alias, (NoToolCalls(),), ("RunInconclusive",))
    assert columns(alias) == projected
