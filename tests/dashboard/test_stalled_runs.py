"""A running run that nobody drives says so — "stalled since …" on its page, in the list and in
the API — and the reconciler queues it again: a worker that died, a step message that was lost,
or no worker at all."""

from __future__ import annotations

import time

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime.events import DriverLeased, LeaseGranted, LeaseReleased
from services import runs, steps
from services.control import Control, stalled
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db


def started_at(run_id: str) -> float:
    return DjangoJournal().read(f"run-{run_id}")[0].event.t


def last_lease(run_id: str):
    return DjangoJournal().read(f"lease-{run_id}")[-1].event


def test_a_run_no_worker_has_taken_is_stalled_once_the_grace_has_passed(owner, settings):
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    start = started_at(run_id)
    assert stalled({run_id: start}, now=start + settings.STALL_SECONDS - 1) == {}
    assert stalled({run_id: start}, now=start + settings.STALL_SECONDS + 1) == {run_id: start}


def test_a_run_whose_step_ended_and_whose_next_step_never_came_is_stalled(owner, settings):
    run_id = run_of("first-flight", steps=2)
    released = last_lease(run_id)
    assert isinstance(released, LeaseReleased) and released.outcome == "stepped"
    start = started_at(run_id)
    assert stalled({run_id: start}, now=released.t + 1) == {}
    later = released.t + settings.STALL_SECONDS + 1
    assert stalled({run_id: start}, now=later) == {run_id: released.t}


def test_a_run_whose_driver_died_holding_the_lease_is_stalled_when_the_lease_expires(owner):
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    lease = Control(run_id).acquire("a-worker-that-dies", ttl=30, at_version=1)
    assert lease is not None  # and never released: its worker was killed
    held = last_lease(run_id)
    assert isinstance(held, LeaseGranted)
    start = started_at(run_id)
    assert stalled({run_id: start}, now=held.expires - 1) == {}
    assert stalled({run_id: start}, now=held.expires + 1) == {run_id: held.expires}


def test_a_lease_renewed_by_its_heartbeat_is_stalled_only_when_the_renewal_runs_out(owner):
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    control = Control(run_id)
    lease = control.acquire("a-worker", ttl=30, at_version=1)
    renewed = control.leases.renew(lease, ttl=300)
    start = started_at(run_id)
    assert stalled({run_id: start}, now=lease.expires + 1) == {}  # the heartbeat kept it
    assert stalled({run_id: start}, now=renewed.expires + 1) == {run_id: renewed.expires}


def test_a_driver_lease_stored_before_the_one_lease_primitive_still_says_stalled(owner):
    """Journals written before LeaseGranted drove runs hold DriverLeased: still read."""
    run_id = runs.start_run("repo-fix", "first-flight", by="owner")
    old = DriverLeased(run_id=run_id, holder="w-old", expires=1_000.0, at_version=1)
    DjangoJournal().append(f"lease-{run_id}", [old], 0)
    start = started_at(run_id)
    assert stalled({run_id: start}, now=999.0) == {}
    assert stalled({run_id: start}, now=1_001.0) == {run_id: 1_000.0}


def test_a_finished_run_is_never_stalled(done_run, settings):
    assert runs.status_of(done_run) == "done"
    projection.catch_up()
    settings.STALL_SECONDS = 0
    assert steps.revive_stalled() == []


def test_the_page_the_list_and_the_api_say_stalled_and_the_reconciler_queues_it(
    as_owner, owner, settings
):
    run_id = run_of("first-flight", steps=1)
    projection.catch_up()
    assert "stalled" not in as_owner.get(f"/runs/{run_id}/").content.decode()
    assert as_owner.get(f"/api/runs/{run_id}").json()["stalled_since"] is None

    settings.STALL_SECONDS = 0  # as if a minute had passed with nobody driving it
    time.sleep(0.01)
    page = as_owner.get(f"/runs/{run_id}/").content.decode()
    assert "stalled</span> since" in page and "no worker is driving this run" in page
    listed = as_owner.get("/").content.decode()
    assert 'class="badge stalled"' in listed
    body = as_owner.get(f"/api/runs/{run_id}").json()
    assert body["status"] == "running" and body["stalled_since"]
    assert run_id in {
        r["run_id"] for r in as_owner.get("/api/runs").json()["items"] if r["stalled_since"]
    }
    assert steps.revive_stalled() == [run_id]
