"""A sub-task the run gave up stays given up. A start of its specialist that was still on the
queue (a duplicate delivery, a restart sent just before the give-up) used to take the
specialist's lease afterwards and run it: work and spending for a sub-task the run had
settled; and a step that resumed the run from its journal then looked at the sub-task again
and found more than the give-up was decided on (its stream holding a report, or one more
start), so it diverged from the record and failed, again and again. And a step that resumed
the run after the sub-task's deadline judged it anew by the clock (timed out) where the record
says it was given up on its restarts: the same divergence."""

from __future__ import annotations

import contextlib
import time
from types import SimpleNamespace

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import DeadLetter
from runtime import flight
from runtime.fanout import engine
from runtime.faults import InjectedFailure
from services import letters, runs, specialists
from tests.dashboard.conftest import drive

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.usefixtures("nowhere"),  # tests/conftest.py: the test drives each step
]


def given_up(monkeypatch, settings) -> tuple[str, list[str]]:
    """A triage run whose S2 failed at each of its three starts: given up, escalated, and
    waiting in the dead-letter queue. The run id, and every start of S2 that was sent."""
    sent: list[tuple[str, str]] = []
    monkeypatch.setattr(specialists, "dispatch", lambda run, sub, handoff: sent.append((run, sub)))
    settings.FAULT = "fail:S2#1,fail:S2#2,fail:S2#3"  # a fourth start would go through
    run_id = runs.start_run("support-triage", "broken-policy")
    outcome = drive(run_id)
    s2 = []
    for _ in range(10):
        if outcome != "waiting":
            break
        while sent:
            run, sub = sent.pop(0)
            s2 += [sub] if sub == "S2" else []
            with contextlib.suppress(InjectedFailure):  # its lease let go, the work undone
                specialists.run_specialist(run, sub, "test-worker")
        outcome = drive(run_id)
    assert outcome == "dead-lettered"
    return run_id, s2


def s2_streams(run_id: str) -> list[tuple[str, int, str]]:
    journal = DjangoJournal()
    return [
        (r.stream, r.version, r.event.kind)
        for prefix in (f"worker-{run_id}-S2-", f"lease-worker-{run_id}-S2-")
        for r in journal.read_prefix(prefix)
    ]


def test_a_start_delivered_again_after_the_give_up_does_nothing(monkeypatch, settings):
    run_id, s2 = given_up(monkeypatch, settings)
    assert s2 == ["S2"] * 3
    before = s2_streams(run_id)

    # The last restart's message, delivered a second time, to another worker.
    assert specialists.run_specialist(run_id, "S2", "other-worker") == "given up"

    assert s2_streams(run_id) == before  # nothing written to S2's stream or its lease
    projection.catch_up()
    [letter] = DeadLetter.objects.filter(run_id=run_id, status="open")
    letters.decide_letter(letter.letter_id, "discard", "ann", "go on without the knowledge base")
    assert drive(run_id) == "done"  # resumed from the journal, as the record says
    assert flight.replay(DjangoJournal(), run_id).identical


def test_a_run_resumed_after_the_deadline_of_a_given_up_sub_task_goes_on(monkeypatch, settings):
    run_id, _s2 = given_up(monkeypatch, settings)
    projection.catch_up()
    [letter] = DeadLetter.objects.filter(run_id=run_id, status="open")
    # The person decides after S2's deadline (a minute) has passed: the steps that resume the
    # run read the clock of an hour later.
    later = time.time() + 3600
    monkeypatch.setattr(engine, "time", SimpleNamespace(time=lambda: later))
    letters.decide_letter(letter.letter_id, "discard", "ann", "go on without the knowledge base")

    assert drive(run_id) == "done"
    assert flight.replay(DjangoJournal(), run_id).identical
