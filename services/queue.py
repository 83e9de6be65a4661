"""The one way a service enqueues work for the workers: a Celery task sent by its name.

Services never import `tasks` (the tasks import the services): a message names its task, and
whichever worker has it registered runs it. So the pages, the API and the commands send work
without loading a task module, and renaming a task module cannot break a queued message as
long as its `name=` stays (tests/tasks/test_task_names.py holds them to these names).

Work is sent once the surrounding transaction commits (at once outside one): a worker that
picks a message up always finds what the sender wrote, and a rolled-back request sends nothing.
"""

from __future__ import annotations

import logging
import time

import kombu.exceptions
import kombu.pools
from celery.utils.nodenames import worker_direct
from django.db import DatabaseError, transaction

from config.celery import app
from services.control import Control

log = logging.getLogger(__name__)
# Sends of one message tried with a fresh pool after kombu handed back a closed channel.
STALE_CHANNEL_TRIES = 3

# The names queued messages carry. They are the tasks' historical import paths; keep them.
ADVANCE = "tasks.runs.advance"
SPECIALIST = "tasks.fanout.specialist"
PUSH_TRACE = "tasks.traces.push"
PUSH_LIVE = "tasks.traces.push_live"


def send(name: str, *ids: str, countdown: float | None = None, node: str | None = None) -> None:
    """Enqueue task `name` with these ids once the current transaction commits: on the common
    queue, or on worker `node`'s own queue (CELERY_WORKER_DIRECT) when given."""
    transaction.on_commit(lambda: _publish(name, ids, countdown, node))


def _advance(run_id: str, countdown: float | None, node: str | None) -> None:
    try:
        # Where the run's lease stands as the message is sent: a step that took the run since
        # has it in hand, and the message does nothing (services/steps.py). Without it, a
        # message Redis delivered again (its worker died; the visibility timeout passed) drove
        # a step between two others and started a second chain of next steps.
        sent: int | None = Control(run_id).sent_at()
    except DatabaseError as exc:
        # The database did not answer: the message goes without it, for any step to take, as
        # a message sent before there was one.
        log.warning("run %s's next step is sent without its lease's version (%s)", run_id, exc)
        sent = None
    try:
        _publish(ADVANCE, (run_id, sent), countdown, node)
    except kombu.exceptions.OperationalError as exc:
        # The run is recorded and running; only the message saying "drive it" was lost. The
        # reconciler (tasks/runs.py, in any worker's beat) queues a running run that
        # nobody drives, so the broker being away is a delay, not a failure of what was asked:
        # answering an error here would have a caller start the same run again.
        log.warning(
            "the broker did not take run %s's next step (%s); a worker's beat queues it again "
            "once the broker is back (docs/workers.md, Runs on workers)",
            run_id,
            exc,
        )


def _publish(
    name: str, ids: tuple[str | int | None, ...], countdown: float | None, node: str | None
) -> None:
    if app.conf.task_always_eager:
        # MINUTES_EAGER (a benchmark flying runs in one process): run it here and now, as
        # Task.delay would. send_task ignores eagerness, so the task is looked up instead,
        # from the modules the app is configured to load.
        app.loader.import_default_modules()
        app.tasks[name].apply(args=ids)
        return
    # The node's own queue as Celery declares it (exchange C.dq2, routed by hostname).
    routing = {"queue": worker_direct(node)} if node else {}
    for attempt in range(1, STALE_CHANNEL_TRIES + 1):
        try:
            app.send_task(name, args=ids, countdown=countdown, **routing)
            return
        except AttributeError:
            # kombu's Redis transport can hand its retry a channel the broker's restart closed
            # (its connection is None: AttributeError, which the publish retry policy does not
            # cover). A fresh pool has a fresh channel. Seen in
            # tests/tasks/test_embedded_broker_stress.py, once in several runs.
            if attempt == STALE_CHANNEL_TRIES:
                raise
            log.warning("enqueue of %s found a closed broker channel; retrying", name)
            fresh_pools()
            time.sleep(0.5 * attempt)


def fresh_pools() -> None:
    """Drop this process's broker connections and producers; the next send makes new ones."""
    kombu.pools.reset()  # type: ignore[no-untyped-call]
    app._pool = None
    app.amqp._producer_pool = None


def advance(run_id: str, countdown: float | None = None, node: str | None = None) -> None:
    """Drive the run's next step (on a worker), after `countdown` seconds if given; on worker
    `node` when given, where the run's flight is parked."""
    transaction.on_commit(lambda: _advance(run_id, countdown, node))


def push_trace(run_id: str, countdown: float | None = None) -> None:
    """Push the run's trace to the configured collector (on a worker; services/traces.py)."""
    send(PUSH_TRACE, run_id, countdown=countdown)


def push_live(run_id: str) -> None:
    """Push the run's spans made final since its last live push (on a worker)."""
    send(PUSH_LIVE, run_id)


def specialist(run_id: str, sub_id: str) -> None:
    """Run one specialist of a fan-out run (on a worker); its brief is in the journal."""
    send(SPECIALIST, run_id, sub_id)
