"""A refund saga whose undo cannot reach the orders server: the credit was issued, the policy
step failed, and the server's process is gone when the credit's reversal is sent. The run is
parked for a person with the undo outstanding (journalled: which step's undo, why, and that
money may still be moved); with the server back and the letter retried, the same undo key is
sent again, the credit is reversed once, and the saga ends compensated. Before, the saga
raised out of the flight with nothing journalled, and a resume raised the same error without
calling the server (the ledger refused a key it had recorded as failed), so the credit stood.

The real orders server, on a book in a file; the driver's surface kills the server's process
(SIGKILL) right before the reversal goes out, so the call fails as it would on the workers."""

from __future__ import annotations

import os
import signal
import sqlite3

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import DeadLetter
from runtime import flight, folds, views
from runtime.coordination.leases import Leases
from runtime.events import (
    DeadLettered,
    EffectFailed,
    EffectResumed,
    EffectStarted,
    EffectSucceeded,
    SagaSettled,
    SagaUndoFailed,
    TeamFinished,
)
from runtime.fenced import Fenced
from runtime.team import Services
from services import letters
from teams.triage.services import TriageServices
from teams.triage.surface import default_surface
from tests.runtime.test_mcp import children, wait_until_gone

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


class ServerDiesBefore:
    """The team's real surface, whose orders server is killed right before `tool` is called
    (once): the call goes to a server that is gone."""

    def __init__(self, book, tool: str | None) -> None:
        self.before = set(children())
        self.inner = default_surface(book)
        self.tool = tool

    def call(self, name, args):
        if name == self.tool:
            self.tool = None
            [pid] = [
                pid
                for pid, (_, cmd) in children().items()
                if pid not in self.before and "teams/triage/servers/orders.py" in cmd
            ]
            os.kill(pid, signal.SIGKILL)
            assert not wait_until_gone({pid})
        return self.inner.call(name, args)

    def __getattr__(self, name):
        return getattr(self.inner, name)


def drive(journal, run_id, root, book, worker, tool=None, first=False, surface=None):
    lease = Leases(journal).acquire(run_id, worker, ttl=60)
    fenced = Fenced(journal, *lease.fence)
    surface = surface or ServerDiesBefore
    services = Services(provided=(TriageServices(mcp=lambda: surface(book, tool)),))
    if first:
        config = flight.plan("support-triage", "refund-saga", run_id)
        outcome = flight.fly(fenced, config, run_id, root, services=services)
    else:
        outcome = flight.resume(fenced, run_id, root, services=services)
    Leases(journal).release(lease)
    return outcome


def book_of(book):
    rows = sqlite3.connect(book).execute("SELECT kind, ref FROM operation ORDER BY at")
    return [(kind, ref) for kind, ref in rows]


def run_events(journal, run_id):
    return [r.event for r in journal.read(f"run-{run_id}")]


def test_an_undo_that_could_not_reach_the_server_is_parked_and_sent_again(nowhere, tmp_path):
    journal = DjangoJournal()
    run_id = flight.new_run_id()
    book = tmp_path / "book.sqlite3"

    parked = drive(journal, run_id, tmp_path, book, "worker-1", "orders.reverse_credit", True)
    assert parked.status == "dead-lettered", parked.reason
    [(_, credit), (_, label)] = [op for op in book_of(book) if op[0] in ("credit", "label")][::-1]
    assert [kind for kind, _ in book_of(book)] == ["label", "credit"]  # the credit stands

    events = run_events(journal, run_id)
    [failed] = [e for e in events if isinstance(e, SagaUndoFailed)]
    assert (failed.step, failed.refused, failed.standing) == ("credit", False, ["credit", "label"])
    assert "ServerUnreachable" in failed.error and "money may still be moved" in failed.outstanding
    assert not any(isinstance(e, SagaSettled | TeamFinished) for e in events)
    [letter] = [e for e in events if isinstance(e, DeadLettered)]
    assert letter.task_id == "refund" and "undo of credit" in letter.reason
    assert "money may still be moved" in letter.reason
    summary = folds.run(views.Summary(), journal.read(f"run-{run_id}"))
    assert summary["status"] == "dead-lettered" and "undo of credit" in summary["reason"]
    trail = views.audit(journal.read(f"run-{run_id}"))
    assert any(e["what"] == "SagaUndoFailed" and "credit" in e["why"] for e in trail)

    projection.catch_up()
    [queued] = DeadLetter.objects.filter(run_id=run_id, status="open")
    assert "undo of credit" in queued.reason

    # Resumed before anyone decided: still parked, nothing sent.
    again = drive(journal, run_id, tmp_path, book, "worker-2")
    assert again.status == "dead-lettered"
    assert [kind for kind, _ in book_of(book)] == ["label", "credit"]

    # The server is back (a new surface starts it on the same book); a person retries.
    letters.decide_letter(queued.letter_id, "retry", "ann", "the orders server is back")
    done = drive(journal, run_id, tmp_path, book, "worker-3")
    assert done.status == "done", done.reason

    settled = [e for e in run_events(journal, run_id) if isinstance(e, SagaSettled)]
    assert [s.compensated for s in settled] == [["credit", "label"]]
    assert book_of(book) == [("label", label), ("credit", credit), ("reversal", credit),
                             ("void", label)]  # fmt: skip

    # The reversal was sent again under its key: started, failed, taken again, done.
    undo = f"effect-{failed.key}"
    kinds = [type(r.event) for r in journal.read(undo)]
    assert kinds == [EffectStarted, EffectFailed, EffectResumed, EffectSucceeded]
    assert flight.replay(journal, run_id).identical


class ReversedBefore(ServerDiesBefore):
    """The surface, where somebody reverses the credit at the server (under a key of their
    own) right before the saga's reversal goes out: the server refuses the saga's."""

    def call(self, name, args):
        if name == self.tool:
            self.tool = None
            self.inner.call(name, {**args, "key": "by-hand-at-the-server"})
        return self.inner.call(name, args)


def test_an_undo_the_server_refused_is_not_sent_again_and_a_discard_escalates(nowhere, tmp_path):
    journal = DjangoJournal()
    run_id = flight.new_run_id()
    book = tmp_path / "book.sqlite3"
    tool = "orders.reverse_credit"
    parked = drive(journal, run_id, tmp_path, book, "worker-1", tool, True, ReversedBefore)
    assert parked.status == "dead-lettered", parked.reason
    [failed] = [e for e in run_events(journal, run_id) if isinstance(e, SagaUndoFailed)]
    assert (failed.step, failed.refused) == ("credit", True)
    assert "was reversed already, under key by-hand-at-the-server" in failed.error
    assert "the provider refused it" in failed.outstanding

    # Retried, the saga is tried again, but the refused key is not sent again: its record is
    # the server's answer; the run is parked again, with a second letter.
    projection.catch_up()
    [first] = DeadLetter.objects.filter(run_id=run_id, status="open")
    letters.decide_letter(first.letter_id, "retry", "ann", "try once more")
    again = drive(journal, run_id, tmp_path, book, "worker-2")
    assert again.status == "dead-lettered"
    assert [type(r.event) for r in journal.read(f"effect-{failed.key}")] == [
        EffectStarted,
        EffectFailed,
    ]
    assert [kind for kind, _ in book_of(book)] == ["label", "credit", "reversal"]

    # Discarded: the run ends escalated, saying the undo is outstanding.
    projection.catch_up()
    [second] = DeadLetter.objects.filter(run_id=run_id, status="open")
    letters.decide_letter(second.letter_id, "discard", "ann", "settled at the server by hand")
    ended = drive(journal, run_id, tmp_path, book, "worker-3")
    assert ended.status == "escalated"
    assert "HUMAN_REQUIRED" in ended.reason and "money may still be moved" in ended.reason
    assert not any(isinstance(e, SagaSettled) for e in run_events(journal, run_id))
    assert flight.replay(journal, run_id).identical
