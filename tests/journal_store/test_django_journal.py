"""DjangoJournal passes the Journal contract on SQLite and PostgreSQL, and more."""

from __future__ import annotations

import multiprocessing
import uuid

import pytest
from django.db import connections

from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime.events import ModelResponded
from runtime.journal import WrongExpectedVersion
from tests.journal_store import child
from tests.journal_store.conftest import on_every_backend
from tests.runtime.journal_contract import JournalContract, debit


@on_every_backend(transaction=True)
class TestDjangoJournal(JournalContract):
    @pytest.fixture
    def journal(self, alias):
        return DjangoJournal(alias)


@on_every_backend()
def test_a_v1_model_response_stored_in_june_reads_as_todays_version(alias):
    StoredEvent.objects.using(alias).create(
        event_id=uuid.uuid4(),
        stream="run-old",
        version=1,
        run_id="old",
        kind="ModelResponded",
        v=1,
        agent="coder",
        data='{"usage": 120}',
        t=0.0,
        recorded_at="2026-06-01T00:00:00Z",
    )
    [rec] = DjangoJournal(alias).read("run-old")
    assert isinstance(rec.event, ModelResponded) and rec.event.v == 3  # v2 (text), v3 (estimated)
    assert rec.event.usage.total == 120 and rec.event.text is None
    assert rec.event.usage.estimated is None  # as reported, as every figure before v3 reads
    assert StoredEvent.objects.using(alias).get().data == '{"usage": 120}'  # never rewritten


@on_every_backend()
def test_events_read_back_exactly_as_appended(alias):
    journal = DjangoJournal(alias)
    event = ModelResponded(
        run_id="r1",
        agent="coder",
        turn=3,
        task_id="T1",
        text="hi",
        tool_calls=[{"id": "c", "name": "x", "args": {"a": [1, {"b": None}]}}],
        usage={"total": 5, "prompt": 3, "completion": 2},
    )
    journal.append("run-r1", [event], 0)
    [rec] = journal.read("run-r1")
    assert rec.event == event


@pytest.mark.slow
@on_every_backend(transaction=True)
def test_processes_racing_at_one_expected_version_exactly_one_wins(alias):
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(4)
    results = ctx.Queue()
    env = child.env_for(alias)
    procs = [
        ctx.Process(target=child.race, args=(env, alias, barrier, results, i)) for i in range(4)
    ]
    for p in procs:
        p.start()
    assert child.exit_codes(procs) == [0] * 4
    outcomes = sorted(results.get(timeout=5) for _ in procs)
    assert [o for o, _ in outcomes].count("won") == 1
    assert [o for o, _ in outcomes].count("lost") == 3
    winner = next(i for o, i in outcomes if o == "won")
    [rec] = DjangoJournal(alias).read("run-race")
    assert rec.event.amount == winner


@on_every_backend(transaction=True)
def test_a_retried_append_after_a_lost_answer_adds_nothing(alias):
    journal = DjangoJournal(alias)
    batch = [debit(1), debit(2)]
    first = journal.append("run-a", batch, 0)
    connections[alias].close()  # as if the connection died before the answer came back
    again = journal.append("run-a", batch, 0)
    assert [r.position for r in again] == [r.position for r in first]
    assert StoredEvent.objects.using(alias).count() == 2
    with pytest.raises(WrongExpectedVersion):
        journal.append("run-a", [debit(3)], 0)
