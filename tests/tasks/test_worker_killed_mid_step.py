"""A worker SIGKILLed in the middle of a step, under the default lease and reconciler settings:
its lease stops being renewed and runs out, the reconciler queues the run again, and the run
completes within 60 s of the kill, without waiting for the broker's visibility timeout (which
would redeliver the lost step only after 15 minutes).

On the embedded broker only, the default one: it is the same Redis server and the same kombu
transport as a Redis of one's own (over a unix socket rather than TCP), so the recovery path —
the lease running out, the reconciler on the beat, a fresh message — is the same code on both,
and a second run of this test on Redis (45 s of default timings) proved nothing more. Kills on
a Redis of one's own, with short leases, are tests/tasks/test_workers_on_redis.py's.

The step is caught at a known place by a fault seam (it hangs right after its second tool call
is durable, until killed); the test shortens nothing else. The worker is started again at once,
as a supervisor (systemd, docker) restarts one."""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import pytest

from config.broker import EmbeddedRedis
from journal_store.journal import DjangoJournal
from runtime.events import LeaseGranted
from services import beat, runs
from tests.tasks.conftest import Workers, settled, use_broker, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
DEADLINE = 60.0  # seconds from the kill: what the long-runs issue asks of default settings
HANG_AT = "ToolDispatched#2"


@pytest.fixture
def broker(settings):
    folder = Path(tempfile.mkdtemp(prefix="minutes-broker-"))
    embedded = EmbeddedRedis(folder)
    embedded.start()
    use_broker(embedded.url, settings.CELERY_BROKER_TRANSPORT_OPTIONS)
    try:
        yield embedded.url
    finally:
        embedded.stop()
        shutil.rmtree(folder, ignore_errors=True)
        use_broker(settings.CELERY_BROKER_URL, settings.CELERY_BROKER_TRANSPORT_OPTIONS)


def test_a_run_whose_worker_was_killed_mid_step_completes_within_a_minute(
    broker, tmp_path, settings, fly_team
):
    settings.WORKSPACES = tmp_path / "home" / "workspaces"
    workers = Workers(tmp_path, broker, quick=False)
    journal = DjangoJournal()
    run_id = runs.start_run("repo-fix", "first-flight")
    try:
        doomed = workers.start(concurrency=1, MINUTES_FAULT=f"hang:{HANG_AT}")
        wait_until(
            lambda: (
                [r.event.kind for r in journal.read(f"run-{run_id}")].count("ToolDispatched") >= 2
            ),
            60,
            "the step to reach its second tool call",
            workers,
        )
        hung_at = journal.version(f"run-{run_id}")
        # Killed just after its heartbeat renewed the lease: the longest the lease can outlive
        # its worker (a whole STEP_LEASE_SECONDS).
        wait_until(
            lambda: journal.read(f"lease-{run_id}")[-1].event.kind == "LeaseRenewed",
            60,
            "the heartbeat to renew the hung step's lease",
            workers,
        )
        workers.kill(doomed)
        killed = time.time()
        workers.start(concurrency=1, MINUTES_FAULT="")  # restarted as a supervisor would
        wait_until(lambda: settled([run_id]), DEADLINE - (time.time() - killed), "the run", workers)
        done = time.time()
    finally:
        workers.stop_all()
    assert runs.status_of(run_id) == "done"
    assert done - killed < DEADLINE  # the behaviour asked for, not a performance figure
    # The worker's beat revived it, and its round is recorded for the pages to read.
    assert beat.last_round() is not None

    lease = journal.read(f"lease-{run_id}")
    grants = [r for r in lease if isinstance(r.event, LeaseGranted)]
    cut = next(r for r in reversed(grants) if r.event.at_version < hung_at)
    taken = next(r for r in grants if r.version > cut.version)
    again = taken.event
    # The next step went on from where the killed one stopped, on another worker, and only once
    # the killed step's lease (as its heartbeat last renewed it) had run out.
    assert again.at_version == hung_at and again.holder != cut.event.holder
    held = [r.event for r in lease if cut.version <= r.version < taken.version]
    assert held[0].kind == "LeaseGranted"  # renewed, then never given back: its worker died
    assert {e.kind for e in held[1:]} == {"LeaseRenewed"}
    assert again.t >= held[-1].expires
    print(  # the figures behind docs/workers.md's table (pytest -s shows them)
        f"\n{broker.split(':')[0]}: driven again {again.t - killed:.1f} s after the kill, "
        f"done {done - killed:.1f} s after it"
    )

    # Nothing was lost or done twice: the journal is the one an uninterrupted flight writes.
    reference = fly_team("first-flight", park=True, started_by="operator")
    ours = [r.event for r in journal.read(f"run-{run_id}")]
    assert [e.kind for e in ours] == [e.kind for e in reference.events]
