"""A catch-up with nothing to apply is one query: no transaction, no lock, no write."""

from __future__ import annotations

from django.db import connections
from django.test.utils import CaptureQueriesContext

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import Checkpoint
from tests.journal_store.conftest import on_every_backend
from tests.journal_store.rounds import Rounds


@on_every_backend()
def test_a_catch_up_with_nothing_to_apply_is_one_query(alias):
    run = Rounds("r-idle")
    DjangoJournal(alias).append(run.stream, [*run.start(), *run.round_events()], 0)
    assert projection.catch_up(using=alias) > 0
    marks = dict(Checkpoint.objects.using(alias).values_list("name", "position"))

    with CaptureQueriesContext(connections[alias]) as captured:
        assert projection.catch_up(using=alias) == 0
    assert len(captured.captured_queries) == 1, captured.captured_queries
    assert captured.captured_queries[0]["sql"].lstrip().upper().startswith("SELECT")
    assert dict(Checkpoint.objects.using(alias).values_list("name", "position")) == marks
