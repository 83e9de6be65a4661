"""The reconciler notes a stall in the run's journal (RunStalled, once per stall) as it queues
the run again, so the run's Findings say it stalled, since when and why; the next step to take
the run turns the finding into how long the stall lasted."""

from __future__ import annotations

import html
import time

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import Finding
from runtime.events import RunStalled, StopRequested
from services import runs, steps
from services.control import Control
from services.steps import drive_step

pytestmark = pytest.mark.django_db


def noted(run_id: str) -> list[RunStalled]:
    return [
        r.event
        for r in DjangoJournal().read(f"control-{run_id}")
        if isinstance(r.event, RunStalled)
    ]


def findings_page(client, run_id: str) -> str:
    projection.catch_up()
    return html.unescape(client.get(f"/runs/{run_id}/?tab=findings").content.decode())


def test_a_run_whose_driver_died_is_a_stalled_run_finding_until_a_step_takes_it_again(
    as_owner, owner
):
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    lease = Control(run_id).acquire("a-worker-that-dies", ttl=0.01, at_version=1)
    assert lease is not None  # never renewed nor released: its worker was killed
    time.sleep(0.05)  # the lease runs out

    assert steps.revive_stalled() == [run_id]
    [stall] = noted(run_id)
    assert (stall.why, stall.holder, stall.since) == ("lease expired", lease.holder, lease.expires)
    assert steps.revive_stalled() == [run_id]  # queued again, but the same stall: noted once
    assert len(noted(run_id)) == 1

    page = findings_page(as_owner, run_id)
    assert 'title="stalled_run">stalled run</span>' in page
    assert "the run stalled: the lease of a-worker-that-dies ran out at" in page
    assert "nobody has driven it since; the reconciler queued it again" in page
    assert Finding.objects.filter(run_id=run_id, kind="stalled_run").count() == 1

    assert drive_step(run_id, "test") == "stepped"  # a live worker takes it
    page = findings_page(as_owner, run_id)
    [finding] = Finding.objects.filter(run_id=run_id, kind="stalled_run")
    assert finding.summary.startswith("the run stalled for ")
    assert "the lease of a-worker-that-dies ran out at" in finding.summary
    assert finding.summary in page
    assert runs.status_of(run_id) == "running"


class Interleaved(DjangoJournal):
    """The store, with a person's stop request landing on the control stream just before the
    reconciler's first append there: the race of a beat and a click."""

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id
        self.raced = False

    def append(self, stream, events, expected_version, *args, **kwargs):
        if stream == f"control-{self.run_id}" and not self.raced:
            self.raced = True
            DjangoJournal().append(
                stream, [StopRequested(run_id=self.run_id, by="ann")], expected_version
            )
        return super().append(stream, events, expected_version, *args, **kwargs)


def test_a_stall_noted_while_a_person_asks_to_stop_keeps_both(owner):
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    lease = Control(run_id).acquire("a-worker-that-dies", ttl=0.01, at_version=1)
    time.sleep(0.05)
    control = Control(run_id, Interleaved(run_id))
    stall = control.note_stall(lease.expires)
    assert stall is not None and control.journal.raced
    kinds = [r.event.kind for r in DjangoJournal().read(f"control-{run_id}")]
    assert kinds[-2:] == ["StopRequested", "RunStalled"]
    assert control.note_stall(lease.expires) is None  # noted already
    assert len(noted(run_id)) == 1
