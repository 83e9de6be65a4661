"""The Celery app: configured from Django's settings (the CELERY_ names), tasks from tasks/."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, TextIO

from celery import Celery
from celery.beat import PersistentScheduler
from celery.signals import celeryd_after_setup, worker_init, worker_process_init

from config.consumer_watch import ConsumerWatch

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("minutes")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.imports = ["tasks.runs", "tasks.effects", "tasks.fanout", "tasks.traces", "tasks.indexes"]
# Each worker's consumer checks that it still takes what waits for it.
app.steps["consumer"].add(ConsumerWatch)


# Where this process says that it falls back to the embedded broker; nowhere unless
# `note_fallback` was called (manage.py calls it for its commands).
fallback_note: TextIO | None = None
# Commands that never say so: demo starts the embedded broker for the workers it starts (and
# says that it does), and runserver is a server, like gunicorn and the workers.
QUIET_COMMANDS = frozenset({"demo", "runserver"})


# Whether manage.py started this process (it calls note_fallback): its web server is
# runserver, make run's, whose workers listen on the embedded broker with it.
by_manage = False


def note_fallback(command: str, stream: TextIO) -> None:
    """Have manage.py `command` say on `stream` which broker it uses when it falls back to the
    embedded one: workers started with CELERY_BROKER_URL never read what it queues there."""
    global fallback_note, by_manage
    by_manage = True
    fallback_note = None if command in QUIET_COMMANDS else stream


def warn_a_web_server_on_the_embedded_broker() -> None:
    """config/wsgi.py, as a web server (gunicorn) starts: one without CELERY_BROKER_URL queues
    every run on an embedded broker of its own, which it starts at the first run and which
    outlives it, and workers started with CELERY_BROKER_URL never read it. Said in its log;
    runserver under manage.py (make run, whose workers listen there) keeps quiet."""
    from django.conf import settings

    if by_manage or not settings.EMBEDDED_BROKER or settings.CELERY_TASK_ALWAYS_EAGER:
        return
    logging.getLogger(__name__).warning(
        "CELERY_BROKER_URL is not set: this web server queues runs on the embedded broker "
        "(%s), started at its first run and left running after it stops; only workers started "
        "without CELERY_BROKER_URL from this MINUTES_HOME read it. The web server and the "
        "workers must share one broker: set CELERY_BROKER_URL=redis://HOST:6379/0 for both",
        settings.CELERY_BROKER_URL,
    )


@app.on_after_configure.connect
def start_embedded_broker(sender: Celery, **_: object) -> None:
    """The first process that needs the embedded broker (a worker, or anyone enqueueing a step)
    starts it, so a command run without `demo` still queues its work for the next worker.

    Celery configures itself on first use, not on import: a process that never enqueues
    (migrate, an export) never starts a broker, and never says which one it would use.
    """
    from django.conf import settings

    from config.broker import EmbeddedRedis

    if settings.EMBEDDED_BROKER and sender.conf.broker_url == settings.CELERY_BROKER_URL:
        if fallback_note is not None:
            # Said before it is started: a start that fails then explains itself in context.
            fallback_note.write(
                f"broker: the embedded one ({sender.conf.broker_url}), as CELERY_BROKER_URL is "
                "not set; set it to queue work where your workers listen\n"
            )
            fallback_note.flush()
        EmbeddedRedis(settings.BROKER_DIR).ensure()


class HomeScheduler(PersistentScheduler):  # type: ignore[misc]  # Celery is untyped
    """Celery's scheduler, making the folder its schedule file lives in (MINUTES_HOME, see
    CELERY_BEAT_SCHEDULE_FILENAME) first: a beat on a fresh MINUTES_HOME died at its start."""

    def setup_schedule(self) -> None:
        Path(self.schedule_filename).parent.mkdir(parents=True, exist_ok=True)
        super().setup_schedule()


@worker_process_init.connect
def settle_heap(**_: object) -> None:
    """Each worker process, once started with the tasks imported, stops searching what it
    imported for garbage (runtime/heap.py): a step that replays a long run spent up to a third
    of its time there."""
    from runtime import heap

    heap.settle()


@celeryd_after_setup.connect
def warn_without_beat(sender: str, instance: Any, **_: object) -> None:
    """A worker started without --beat says so at its start: with no beat anywhere, no stalled
    run is ever queued again and no effect in flight is ever settled, and nothing else would
    tell. Quiet where the operator says a beat runs elsewhere (MINUTES_BEAT_ELSEWHERE): nothing
    a worker can read cheaply shows whether one does.
    """
    from django.conf import settings

    # Celery's Beat step sets `beat` to the embedded scheduler when the worker has one.
    if getattr(instance, "beat", None) is not None or settings.BEAT_ELSEWHERE:
        return
    logging.getLogger(__name__).warning(
        "worker %s runs no beat (no --beat): it revives no stalled run and settles no effect in "
        "flight; unless a beat runs elsewhere, start one (`celery -A config beat`, or one worker "
        "with --beat), or set MINUTES_BEAT_ELSEWHERE=1 where one does",
        sender,
    )


@celeryd_after_setup.connect
def warn_a_clock_off(sender: str, **_: object) -> None:
    """A worker whose clock is off the database's by a sizable part of a lease says so at its
    start (services.clocks): leases are judged by the readers' clocks. A warning, not a
    refusal: a database unreachable for a moment must not keep a worker from starting."""
    from django.conf import settings
    from django.db import DatabaseError, connections

    from services import clocks

    log = logging.getLogger(__name__)
    try:
        problem = clocks.clock_problem(clocks.skew(), settings.STEP_LEASE_SECONDS)
    except DatabaseError as exc:
        log.warning("worker %s could not read the database's clock: %s", sender, exc)
        return
    finally:
        connections.close_all()  # opened before the pool forks: no child may share it
    if problem:
        log.warning("worker %s: %s", sender, problem)


@worker_init.connect
def import_the_mcp_client(**_: object) -> None:
    """A worker has the MCP client (and its SDK) before it forks its pool: each pool process's
    first specialist starts the surface at once (teams/triage/surface.py imports it where a
    surface starts). Not services/specialists.py, which every manage.py command and the web
    server import through services.runs and would pay ~1 s a start for."""
    from runtime.mcp import client  # noqa: F401


@worker_init.connect
def start_local_model(**_: object) -> None:
    """A worker started with MINUTES_LOCAL_MODEL_START starts the local model server before it
    takes any work (unless one answers already), and stops it when it stops: where no `demo`
    runs, the workers own the model, so that no web request ever has to start it."""
    from django.conf import settings

    if not settings.LOCAL_MODEL_START:
        return
    from services import local_model

    try:
        local_model.ensure_running()
    except local_model.LocalModelError as exc:
        # The worker still serves the other backends; runs on this one are refused at start.
        logging.getLogger(__name__).error("the local model server did not start: %s", exc)


def worker_command(
    concurrency: int,
    *,
    beat: bool = False,
    schedule: Path | None = None,
    hostname: str | None = None,
    loglevel: str = "warning",
) -> list[str]:
    """The one command line that starts a worker (demo, the tests and the benchmarks use it).

    `beat` embeds the scheduler that revives stalled runs and settles effects; its schedule
    file lives in MINUTES_HOME unless given.
    """
    import sys

    from django.conf import settings

    command = [sys.executable, "-m", "celery", "-A", "config", "worker"]
    command += ["--concurrency", str(concurrency), "--loglevel", loglevel]
    # Workers coordinate through the journal (leases, fencing), never with each other: no
    # gossip or mingle, whose restart after a broker blip also logs a Celery error.
    command += ["--without-gossip", "--without-mingle"]
    if beat:
        command += ["--beat", "--schedule", str(schedule or settings.CELERY_BEAT_SCHEDULE_FILENAME)]
    if hostname:
        command += ["--hostname", hostname]
    return command
