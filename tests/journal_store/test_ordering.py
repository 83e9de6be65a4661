"""Positions become visible in order: a reader that has seen P never later finds a new event
below P. Proven with many concurrent writers (threads and processes), one transaction held open
for seconds while others commit, and a reader tailing the journal by position."""

from __future__ import annotations

import multiprocessing
import threading
import time

import pytest
from django.db import connections, transaction

from journal_store.journal import DjangoJournal
from runtime.events import BudgetDebited
from tests.journal_store import child
from tests.journal_store.conftest import on_every_backend

pytestmark = pytest.mark.slow


class Tail(threading.Thread):
    """Reads the journal by position, as a projector does, until told to stop."""

    def __init__(self, alias: str) -> None:
        super().__init__(daemon=True)
        self.alias = alias
        self.seen: list[int] = []
        self.ids: list[str] = []
        self.stop = threading.Event()

    def run(self) -> None:
        journal = DjangoJournal(self.alias)
        cursor = 0
        try:
            while True:
                stopping = self.stop.is_set()
                for rec in journal.read_all(after=cursor):
                    assert rec.position > cursor
                    self.seen.append(rec.position)
                    self.ids.append(rec.event.id)
                    cursor = rec.position
                if stopping:
                    return
                time.sleep(0.005)
        finally:
            connections.close_all()


def write(alias: str, stream: str, count: int) -> None:
    journal = DjangoJournal(alias)
    for n in range(count):
        journal.append(stream, [BudgetDebited(run_id="order", amount=n)], n)
    connections.close_all()


def hold_open(alias: str, seconds: float, started: threading.Event) -> None:
    journal = DjangoJournal(alias)
    with transaction.atomic(using=alias):
        journal.append("run-long", [BudgetDebited(run_id="order", amount=999)], 0)
        started.set()
        time.sleep(seconds)  # everybody else commits (or queues) meanwhile
    connections.close_all()


@on_every_backend(transaction=True)
def test_a_tailing_reader_sees_every_event_once_and_in_order(alias):
    tail = Tail(alias)
    tail.start()
    started = threading.Event()
    long = threading.Thread(target=hold_open, args=(alias, 2.0, started))
    long.start()
    started.wait(10)
    writers = [threading.Thread(target=write, args=(alias, f"run-t{i}", 20)) for i in range(4)]
    ctx = multiprocessing.get_context("spawn")
    env = child.env_for(alias)
    procs = [
        ctx.Process(target=child.write_many, args=(env, alias, f"run-p{i}", 20)) for i in range(2)
    ]
    for w in writers:
        w.start()
    for p in procs:
        p.start()
    for w in [long, *writers]:
        w.join(120)
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    time.sleep(0.1)
    tail.stop.set()
    tail.join(30)
    everything = DjangoJournal(alias).read_all()
    assert len(everything) == 1 + 4 * 20 + 2 * 20
    assert tail.ids == [r.event.id for r in everything]  # every event, once, in position order
    assert tail.seen == sorted(tail.seen)


@pytest.mark.django_db(databases=["default", "postgres"], transaction=True)
def test_without_the_append_lock_a_reader_would_skip_an_event_for_ever(monkeypatch, alias):
    """Why the lock is there: on PostgreSQL a position is handed out at insert and becomes
    visible at commit, so a slow transaction's event can appear *below* what a reader has
    already passed. (SQLite's IMMEDIATE transactions serialize writers: no such window.)"""
    if alias != "postgres":
        pytest.skip("the window exists only on PostgreSQL")
    monkeypatch.setattr(DjangoJournal, "serialize_appends", lambda self: None)
    inserted, release = threading.Event(), threading.Event()

    def slow() -> None:
        with transaction.atomic(using=alias):
            DjangoJournal(alias).append("run-slow", [BudgetDebited(run_id="x", amount=1)], 0)
            inserted.set()
            release.wait(10)
        connections.close_all()

    t = threading.Thread(target=slow)
    t.start()
    inserted.wait(10)
    DjangoJournal(alias).append("run-fast", [BudgetDebited(run_id="x", amount=2)], 0)
    journal = DjangoJournal(alias)
    seen = journal.read_all()
    cursor = seen[-1].position
    release.set()
    t.join(10)
    later = journal.read_all(after=cursor)
    everything = journal.read_all()
    assert len(everything) == 2 and len(seen) == 1 and later == []  # one event lost to the reader
