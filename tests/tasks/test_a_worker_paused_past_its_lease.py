"""A worker paused (SIGSTOP) right after it dispatched a tool call, past its lease, and woken
(SIGCONT) once another worker took the run over, changes nothing: it does not run the call in
the workspace the other worker now drives. The run ends as an uninterrupted flight ends, the
call ran once, and the workspace is the one the journal describes.

Real workers on a real Redis, the real repo-fix team with scripted models: the first worker
hangs at a fault seam once the run's third ToolDispatched (the coder's edit_file) is durable,
and is stopped there with its whole process group, its lease's heartbeat with it."""

from __future__ import annotations

import os
import signal

import pytest

from config.celery import app as celery_app
from journal_store.journal import DjangoJournal
from services import runs
from tests.tasks.conftest import settled, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
# Long enough for the test to see the dispatch and stop the worker inside the hang; after
# SIGCONT the worker sleeps what is left of it (nothing, by then) and goes on.
SEAM = "hang:ToolDispatched#3:10"
GUARDED = "textparse/parser.py"  # the file the coder's edit_file changes


def dispatched(journal: DjangoJournal, run_id: str) -> int:
    return [r.event.kind for r in journal.read(f"run-{run_id}")].count("ToolDispatched")


def idle(name: str) -> bool:
    """Whether the worker whose name starts with `name` answers that it runs no task."""
    replies = celery_app.control.inspect(timeout=1).active() or {}
    return any(host.startswith(name) and not tasks for host, tasks in replies.items())


def test_a_worker_woken_after_its_run_was_taken_over_does_not_run_the_tool_again(
    redis_workers, fly_team, settings
):
    journal = DjangoJournal()
    run_id = runs.start_run("repo-fix", "first-flight")
    paused = redis_workers.start(concurrency=1, MINUTES_FAULT=SEAM)
    wait_until(lambda: dispatched(journal, run_id) >= 3, 120, "the edit's dispatch", redis_workers)
    os.killpg(paused.pid, signal.SIGSTOP)
    try:
        executed = redis_workers.exec_log.read_text().split()
        assert "edit_file" not in executed  # stopped before the edit ran, inside the seam
        holder = journal.last(f"lease-{run_id}").event.holder  # granted or renewed: its own
        redis_workers.start(concurrency=1, MINUTES_FAULT="")
        wait_until(
            lambda: journal.last(f"lease-{run_id}").event.holder != holder,
            60,
            "another worker to take the run over",
            redis_workers,
        )
    finally:
        os.killpg(paused.pid, signal.SIGCONT)
    wait_until(lambda: settled([run_id]), 120, "the run to settle", redis_workers)
    assert runs.status_of(run_id) == "done"
    # The woken worker's step is over (it sleeps what is left of the seam's hang, then goes
    # on until something refuses it): whatever it was going to do, it has done.
    wait_until(lambda: idle("test0@"), 60, "the woken worker's step to end", redis_workers)

    executed = redis_workers.exec_log.read_text().splitlines()
    assert [line.split()[1] for line in executed].count("edit_file") == 1
    assert len(executed) == len(set(executed))  # no tool ran twice
    reference = fly_team("first-flight", park=True, started_by="operator")
    ours = [r.event for r in journal.read(f"run-{run_id}")]
    assert [e.kind for e in ours] == [e.kind for e in reference.events]
    # The workspace is what the journal says was done to it: the guard is in once.
    workspace = settings.WORKSPACES / f"{run_id}.workspace"
    assert (workspace / GUARDED).read_text() == (reference.workspace / GUARDED).read_text()
