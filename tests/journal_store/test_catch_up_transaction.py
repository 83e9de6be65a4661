"""A catch-up is one transaction, however many projectors and batches it takes: every read
model and checkpoint moves at one commit."""

from __future__ import annotations

from unittest import mock

from django.db import connections

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import Checkpoint, DeadLetter, RunSummary
from runtime import events as ev
from tests.journal_store.conftest import on_every_backend
from tests.journal_store.rounds import Rounds


@on_every_backend(transaction=True)
def test_a_catch_up_of_every_projector_over_many_batches_commits_once(alias):
    run = Rounds("r-once")
    letter = ev.DeadLettered(
        run_id=run.run_id, task_id="T1", letter_id="dl-1", reason="poison", attempts=3
    )
    events = [*run.start(), *run.round_events(), letter]
    DjangoJournal(alias).append(run.stream, events, 0)
    connection = connections[alias]

    with mock.patch.object(connection, "commit", wraps=connection.commit) as commit:
        applied = projection.catch_up(using=alias, batch=4)  # many batches per projector
    assert commit.call_count == 1
    assert applied >= len(events)
    assert set(Checkpoint.objects.using(alias).values_list("position", flat=True)) == {
        DjangoJournal(alias).last_position()
    }
    assert RunSummary.objects.using(alias).get(run_id=run.run_id).event_count == len(events)
    assert DeadLetter.objects.using(alias).get().letter_id == "dl-1"
