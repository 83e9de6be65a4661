"""Thread and audit rows are inserted once and updated in place: a later batch touches only
the rows its events concern, never deleting and re-inserting the run's rows."""

from __future__ import annotations

from django.db import connections
from django.test.utils import CaptureQueriesContext

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import AuditEntry, ThreadMessage
from tests.journal_store.conftest import on_every_backend
from tests.journal_store.rounds import Rounds


def rows(alias: str, model) -> dict[int, int]:
    return dict(model.objects.using(alias).values_list("position", "pk"))


@on_every_backend()
def test_a_later_batch_updates_a_delivery_in_place_and_leaves_older_rows_alone(alias):
    run, journal = Rounds("r-in-place"), DjangoJournal(alias)
    events = [*run.start(), *run.round_events(), *run.round_events(late_delivery=True)]
    journal.append(run.stream, events, 0)
    projection.catch_up(using=alias)
    messages, audit = rows(alias, ThreadMessage), rows(alias, AuditEntry)
    waiting = ThreadMessage.objects.using(alias).get(delivered=False)  # the last REJECT

    later = run.round_events()  # opens with that REJECT's delivery
    journal.append(run.stream, later, len(events))
    with CaptureQueriesContext(connections[alias]) as captured:
        projection.catch_up(using=alias)

    waiting.refresh_from_db(using=alias)
    assert waiting.delivered
    after = rows(alias, ThreadMessage)
    assert {p: after[p] for p in messages} == messages  # same rows, same keys
    assert len(after) == len(messages) + 3  # the round's REQUEST, DONE and REJECT
    audit_after = rows(alias, AuditEntry)
    assert {p: audit_after[p] for p in audit} == audit
    assert len(audit_after) == len(audit) + 1  # the round's REJECT
    deletes = [
        q["sql"]
        for q in captured.captured_queries
        if q["sql"].lstrip().upper().startswith("DELETE")
    ]
    assert deletes == []
