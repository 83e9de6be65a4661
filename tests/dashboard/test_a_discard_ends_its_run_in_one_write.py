"""Discarding a step's dead letter ends its run: the decision and the run's verdict are one
write. They were two, and a web process that died between them (or a database that failed the
second) left the letter discarded and the run running: its next step counted the dying step's
starts again and dead-lettered it a second time, undoing the person's discard.

The verdict's write fails here as a database that went away would fail it."""

from __future__ import annotations

import pytest
from django.db import OperationalError

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import DeadLetter
from runtime.events import TeamFinished
from services import letters, runs
from services.control import Control
from tests.dashboard.conftest import drive, run_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def letter(owner) -> str:
    """An open dead letter in a run's control stream (a step that kept dying)."""
    run_id = run_of("first-flight", steps=1)
    return Control(run_id).dead_letter("the step kept dying", 4, "Boom").letter_id


def kinds(stream: str) -> list[str]:
    return [r.event.kind for r in DjangoJournal().read(stream)]


def test_a_discard_whose_verdict_is_not_written_writes_nothing(letter, monkeypatch):
    run_id = letter.split(":")[0]
    before = (kinds(f"run-{run_id}"), kinds(f"control-{run_id}"))
    written = DjangoJournal.append_locked

    def verdict_fails(self, stream, events, expected_version):
        if any(isinstance(e, TeamFinished) for e in events):
            raise OperationalError("server closed the connection unexpectedly")
        return written(self, stream, events, expected_version)

    monkeypatch.setattr(DjangoJournal, "append_locked", verdict_fails)
    with pytest.raises(OperationalError):
        letters.decide_letter(letter, "discard", "rosa", "not worth it")
    assert (kinds(f"run-{run_id}"), kinds(f"control-{run_id}")) == before
    projection.catch_up()
    assert DeadLetter.objects.get(letter_id=letter).status == "open"
    assert runs.status_of(run_id) == "dead-lettered"

    # The person's discard, taken again, ends the run; no step dead-letters it again.
    monkeypatch.undo()
    letters.decide_letter(letter, "discard", "rosa", "not worth it")
    assert kinds(f"run-{run_id}")[-1] == "TeamFinished"
    assert kinds(f"control-{run_id}")[-1] == "DeadLetterDiscarded"
    assert drive(run_id) == "escalated"
    assert kinds(f"control-{run_id}").count("DeadLettered") == 1
    assert runs.status_of(run_id) == "discarded"
