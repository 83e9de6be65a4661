"""The stall sweep (services/steps.py revive_stalled) finds runs nobody drives by their
summary's status. A run the summaries' projector set aside (journal_store/stopped.py) keeps the
summary it had before the event its fold stopped at: one finished since still said running,
and was queued again at every beat. Its journal decides now; a normal stalled run, and a set
aside run its journal says is going, are queued as before; so is one whose row no event model
reads, once: the step that cannot read it back parks it in a dead letter, which the sweep passes
over (it was left out, and so nobody heard of it)."""

from __future__ import annotations

import time

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoppedView, StoredEvent
from runtime import events as ev
from services import steps
from services.control import Control
from tests.journal_store.test_a_run_whose_event_raises_stops_alone import returned, said

pytestmark = pytest.mark.django_db


def run(run_id: str, *, set_aside: bool = False, then: list[ev.Event] | None = None) -> None:
    """A solo run's start and a message; set aside: a tool's result rewritten in the table
    (its `tool` a mapping: no event model reads the row), then `then` after it."""
    journal = DjangoJournal()
    started = ev.TeamStarted(run_id=run_id, team="solo", scenario="solo-fix", task="t")
    journal.append(f"run-{run_id}", [started, said(run_id, "before")], 0)
    if not set_aside:
        return
    journal.append(f"run-{run_id}", [returned(run_id), *(then or [])], 2)
    bad = StoredEvent.objects.get(run_id=run_id, kind="ToolReturned")
    bad.data = bad.data.replace('"tool":"read_file"', '"tool":{"x":1}')
    bad.save()


def fold_raises_on(run_id: str, monkeypatch, marker: str = '"text":"after"') -> None:
    """The summaries' fold raises on the run's message "after" (a fold's bug: the row reads),
    or on its row holding `marker`."""
    original = projection.Runs.apply

    def raises(self, rows, using):
        if any(row[4] == run_id and marker in row[10] for row in rows):
            raise RuntimeError("the fold met the marker")
        original(self, rows, using)

    monkeypatch.setattr(projection.Runs, "apply", raises)


def test_a_run_set_aside_is_swept_as_its_journal_says(settings, monkeypatch):
    verdict = ev.TeamFinished(run_id="over", status="done", reason="fixed")
    run("over", set_aside=True, then=[said("over", "after"), verdict])
    run("unreadable", set_aside=True, then=[said("unreadable", "after")])
    run("going")
    DjangoJournal().append("run-going", [said("going", "after")], 2)
    run("plain")
    fold_raises_on("going", monkeypatch)
    projection.catch_up()
    monkeypatch.undo()
    aside = set(StoppedView.objects.values_list("run_id", flat=True))
    assert aside == {"over", "unreadable", "going"}
    statuses = dict(RunSummary.objects.values_list("run_id", "status"))
    assert set(statuses.values()) == {"running"}  # over's is stale

    settings.STALL_SECONDS = 0  # as if a minute had passed with nobody driving them
    time.sleep(0.01)
    # "over" finished; "going" is driven by a step whatever its summary's fold made of it, and
    # so is "unreadable", whose step parks it in a dead letter (it cannot read it back; that
    # step is tests/dashboard/test_a_run_that_cannot_be_read_back.py's).
    assert sorted(steps.revive_stalled()) == ["going", "plain", "unreadable"]
    assert sorted(steps.revive_stalled()) == ["going", "plain", "unreadable"]  # at every beat


def test_a_set_aside_run_interrupted_since_is_not_swept(settings, monkeypatch):
    run("parked")
    stop = ev.RunInterrupted(run_id="parked", by="owner", reason="enough")
    DjangoJournal().append("run-parked", [said("parked", "after"), stop], 2)
    Control("parked").request_stop("owner", "enough")
    fold_raises_on("parked", monkeypatch)
    projection.catch_up()
    monkeypatch.undo()
    assert RunSummary.objects.get(run_id="parked").status == "running"
    settings.STALL_SECONDS = 0
    time.sleep(0.01)
    assert steps.revive_stalled() == []


def test_a_run_set_aside_at_its_first_event_is_swept_from_its_journals_start(settings, monkeypatch):
    """Nothing of it folded (its summary says only what is known, status unknown): the sweep
    takes its start from its first row."""
    run("unfolded")
    fold_raises_on("unfolded", monkeypatch, marker='"team":"solo"')
    projection.catch_up()
    monkeypatch.undo()
    assert RunSummary.objects.get(run_id="unfolded").status == "unknown"
    assert StoppedView.objects.get().run_id == "unfolded"
    settings.STALL_SECONDS = 3600
    assert steps.revive_stalled() == []  # not an hour since it started
    settings.STALL_SECONDS = 0
    time.sleep(0.01)
    assert steps.revive_stalled() == ["unfolded"]


def test_a_set_aside_interrupted_run_whose_stop_does_not_read_is_swept_once(settings):
    """Its stop's row rewritten so no event model reads it (the summaries' fold set the run
    aside there): the sweep's look at whether the stop stands read the control stream whole
    and raised out of its round, so no run was revived at any beat. It sends the run once, to
    be parked naming the row, and passes over it after."""
    run("parked")
    stop = ev.RunInterrupted(run_id="parked", by="owner", reason="enough")
    DjangoJournal().append("run-parked", [said("parked", "after"), stop], 2)
    Control("parked").request_stop("owner", "enough")
    bad = StoredEvent.objects.get(run_id="parked", kind="StopRequested")
    bad.data = bad.data.replace('"by":"owner"', '"by":{"x":1}')
    bad.save()
    run("plain")
    projection.catch_up()
    assert StoppedView.objects.get().position == bad.position
    settings.STALL_SECONDS = 0
    time.sleep(0.01)
    assert sorted(steps.revive_stalled()) == ["parked", "plain"]
    assert steps.drive_step("parked", "test") == "dead-lettered"
    letter = Control("parked").open_letter()
    assert letter is not None and f"position {bad.position}" in letter.reason
    assert steps.revive_stalled() == ["plain"]
