"""Queued messages and the beat's schedule carry task names: every name the services and the
beat send is a task the workers register, under the name it has always had."""

from __future__ import annotations

import pytest
from django.conf import settings

from config.celery import app
from journal_store.journal import DjangoJournal
from services import queue, runs

NAMES = {
    "tasks.runs.advance",
    "tasks.runs.reconcile",
    "tasks.fanout.specialist",
    "tasks.effects.reconcile_effects",
    "tasks.indexes.tidy",
    "tasks.traces.push",
    "tasks.traces.push_live",
}


def test_the_workers_register_every_task_under_the_name_queued_messages_carry():
    app.loader.import_default_modules()  # what a worker loads: config/celery.py's imports
    assert {name for name in app.tasks if name.startswith("tasks.")} == NAMES


def test_every_name_the_services_and_the_beat_send_is_a_registered_task():
    app.loader.import_default_modules()
    beat = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert {queue.ADVANCE, queue.SPECIALIST, queue.PUSH_TRACE, queue.PUSH_LIVE} | beat <= set(
        app.tasks
    )


@pytest.mark.django_db(transaction=True)
def test_in_eager_mode_work_sent_by_name_runs_at_once_in_this_process(settings, tmp_path):
    """MINUTES_EAGER (the dashboard benchmark flies runs so): Celery's send_task ignores it,
    so the queue seam runs the task it names itself."""
    settings.WORKSPACES = tmp_path / "workspaces"
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        run_id = runs.start_run("repo-fix", "first-flight")
    finally:
        app.conf.task_always_eager = eager
    assert runs.status_of(run_id) == "done"
    assert DjangoJournal().read(f"run-{run_id}")[-1].event.kind == "TeamFinished"
