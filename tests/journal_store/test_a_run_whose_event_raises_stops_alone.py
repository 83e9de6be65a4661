"""An event a fold cannot take stops that run's read models alone (journal_store/stopped.py).

It used to roll the whole catch-up back: every projector stayed at its checkpoint, and every
page that catches up failed, for every run, until somebody edited the database. Now the run is
set aside for the projector that raised, with the event and the error; every other run, and
the run's own events before that one, are applied; a rebuild tries the run again."""

from __future__ import annotations

import logging

import pytest
from django.core.management import call_command

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoppedView, StoredEvent, ThreadMessage
from runtime import events as ev
from tests.journal_store.conftest import on_every_backend


def said(run_id: str, text: str) -> ev.MessageSent:
    return ev.MessageSent(
        run_id=run_id,
        sender="coder",
        recipient="reviewer",
        task_id="T1",
        performative="request",
        payload={"text": text},
    )


def returned(run_id: str) -> ev.ToolReturned:
    return ev.ToolReturned(run_id=run_id, agent="coder", tool="read_file", result="ok")


def two_runs(alias: str, broken: bool = True) -> int:
    """Runs a and b, side by side; the position of a's ToolReturned, which a tool then
    rewrites in the table (its `tool` a mapping, where every reader expects a name)."""
    journal = DjangoJournal(alias)
    for run in ("a", "b"):
        started = ev.TeamStarted(run_id=run, team="solo", scenario="solo-fix", task="t")
        journal.append(f"run-{run}", [started, said(run, "before")], 0)
    journal.append("run-a", [returned("a")], 2)
    journal.append("run-b", [returned("b")], 2)
    journal.append("run-a", [said("a", "after")], 3)
    journal.append("run-b", [said("b", "after")], 3)
    bad = StoredEvent.objects.using(alias).get(run_id="a", kind="ToolReturned")
    if not broken:
        return bad.position
    bad.data = bad.data.replace('"tool":"read_file"', '"tool":{"<b>x</b>":1}')
    assert '"tool":{' in bad.data  # the event's text as this test expects it
    bad.save(using=alias)
    return bad.position


def texts(alias: str, run_id: str) -> list[str]:
    rows = ThreadMessage.objects.using(alias).filter(run_id=run_id).order_by("position")
    return [m.payload["text"] for m in rows]


def events_of(alias: str, run_id: str) -> int:
    return RunSummary.objects.using(alias).get(run_id=run_id).event_count


@on_every_backend(transaction=True)
def test_the_other_run_and_the_events_before_are_applied(alias, caplog):
    bad = two_runs(alias)
    with caplog.at_level(logging.ERROR, logger="journal_store.stopped"):
        projection.catch_up(using=alias, batch=3)  # the run's later events in later batches
    assert projection.behind(alias) == dict.fromkeys(projection.PROJECTORS, 0)
    assert texts(alias, "b") == ["before", "after"] and events_of(alias, "b") == 4
    assert texts(alias, "a") == ["before"] and events_of(alias, "a") == 2
    (stop,) = StoppedView.objects.using(alias).all()
    assert (stop.projector, stop.run_id, stop.position, stop.kind) == (
        "runs",
        "a",
        bad,
        "ToolReturned",
    )
    assert (
        stop.error.startswith(f"EventFormatError: the event at position {bad}")
        and "<b>x</b>" in stop.error
    )
    assert [r.levelname for r in caplog.records] == ["ERROR"]
    assert "projector runs stopped applying run a" in caplog.records[0].getMessage()

    # Later events: b's are applied, a's skipped, and nothing is said again.
    DjangoJournal(alias).append("run-a", [said("a", "later")], 4)
    DjangoJournal(alias).append("run-b", [said("b", "later")], 4)
    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="journal_store.stopped"):
        projection.catch_up(using=alias)
    assert texts(alias, "b") == ["before", "after", "later"]
    assert texts(alias, "a") == ["before"]
    assert caplog.records == []

    # A rebuild with the cause still there sets the run aside again, the same way.
    projection.rebuild(using=alias)
    assert texts(alias, "a") == ["before"] and texts(alias, "b") == ["before", "after", "later"]
    assert StoppedView.objects.using(alias).get().position == bad

    # The row mended, the rebuild command folds the run whole.
    row = StoredEvent.objects.using(alias).get(position=bad)
    row.data = row.data.replace('"tool":{"<b>x</b>":1}', '"tool":"read_file"')
    row.save(using=alias)
    projection.rebuild(using=alias)
    assert not StoppedView.objects.using(alias).exists()
    assert texts(alias, "a") == ["before", "after", "later"] and events_of(alias, "a") == 5


@pytest.mark.django_db(transaction=True)
def test_the_rebuild_command_tries_the_run_again():
    bad = two_runs("default")
    projection.catch_up()
    assert StoppedView.objects.get().position == bad
    row = StoredEvent.objects.get(position=bad)
    row.data = row.data.replace('"tool":{"<b>x</b>":1}', '"tool":"read_file"')
    row.save()
    call_command("rebuild_projections")
    assert not StoppedView.objects.exists()
    assert texts("default", "a") == ["before", "after"] and events_of("default", "a") == 4


@on_every_backend(transaction=True)
def test_nothing_of_a_failed_batch_is_half_written(alias, monkeypatch):
    """A projector that wrote some of a batch before it raised: the batch's writes are rolled
    back before it is applied again without the run, so no row is written twice."""
    original = projection.Runs.apply

    def writes_then_raises(self, rows, using):
        original(self, rows, using)
        if any('"text":"after"' in row[10] and row[4] == "a" for row in rows):
            raise RuntimeError("the fold met the marker")

    monkeypatch.setattr(projection.Runs, "apply", writes_then_raises)
    two_runs(alias, broken=False)
    projection.catch_up(using=alias)
    assert texts(alias, "b") == ["before", "after"] and events_of(alias, "b") == 4
    assert texts(alias, "a") == ["before"] and events_of(alias, "a") == 3
    stop = StoppedView.objects.using(alias).get()
    assert (stop.run_id, stop.kind, stop.error) == (
        "a",
        "MessageSent",
        "RuntimeError: the fold met the marker",
    )


@on_every_backend(transaction=True)
def test_an_event_of_no_run_still_stops_the_catch_up(alias, monkeypatch):
    """There is no run to set aside: the projector raises as before."""

    def raises(self, rows, using):
        raise RuntimeError("no run's event")

    monkeypatch.setattr(projection.Tags, "apply", raises)
    tagged = ev.RunTagged(run_id="", by="ann", added=["x"], removed=[])
    DjangoJournal(alias).append("subject-x", [tagged], 0)
    with pytest.raises(RuntimeError, match="no run's event"):
        projection.catch_up(using=alias)
    assert not StoppedView.objects.using(alias).exists()
