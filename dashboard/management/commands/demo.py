"""python manage.py demo: the main job — everything Minutes needs, running, with a sample run.

Migrates the database, starts the embedded broker (unless CELERY_BROKER_URL names one), a
Celery worker (with the embedded scheduler for reconciliation) and the web server, starts a
sample team run on a fresh database, and ends with a short block saying where to look, with
the login it makes (its password is shown there, once). The processes' own output goes to log
files, so that block is the last thing on the screen. It then supervises them: a process that
dies is restarted (and says so), so a crashed worker never takes the web server down. Ctrl-C
stops every process it started.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from argparse import ArgumentParser
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from config.broker import BrokerError, EmbeddedRedis
from config.celery import worker_command
from config.commandline import refused
from dashboard.management.demo_checks import (
    hold_the_home,
    port,
    refuse_a_busy_port,
    refuse_a_second_demo,
    refuse_a_silent_broker,
    refuse_the_local_models_port,
    sanitized,
    shown_path,
    workers,
)
from journal_store.checks import folds_ascii_only
from journal_store.models import RunSummary, StoredEvent
from runtime import redact
from services import local_model, runs
from teams import TEAMS

USER = "demo"
# The team of the sample run, and the scenarios --scenario may name.
TEAM = "repo-fix"
SCENARIOS = sorted(TEAMS[TEAM].scenarios)
# A real model is slow and small here: a short leash (the scripted run needs none).
SAMPLE: dict[str, dict[str, Any]] = {
    "scripted": {},
    "local": {"model": "local", "allowance": 60_000, "max_turns": 3},
    "endpoint": {"model": "endpoint", "allowance": 60_000, "max_turns": 6},
}
# A child that dies more often than this is left down (the others keep serving), not restarted
# in a tight loop.
RESTARTS = 5
RESTART_WINDOW = 60.0
# Ctrl-C, a closed terminal or a polite kill: each stops the demo.
STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@dataclass
class Child:
    """A process `demo` started and keeps alive."""

    name: str
    command: list[str]
    log: Path
    env: dict[str, str] = field(default_factory=dict)  # on top of ours
    proc: subprocess.Popen[bytes] | None = None
    deaths: deque[float] = field(default_factory=deque)
    given_up: bool = False

    def start(self) -> None:
        # A session of its own, so stopping it stops its children too (the worker's pool).
        self.proc = subprocess.Popen(
            self.command,
            start_new_session=True,
            env={**os.environ, **self.env},
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def terminate(self) -> None:
        # Its group: a session of its own, so the worker's pool hears it too.
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)

    def kill(self) -> None:
        """Whatever of its group is left (a pool child slower than its parent, or the whole
        group if the parent did not stop in time) goes now: Ctrl-C leaves nothing behind."""
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


def database_shown(database: dict[str, Any]) -> str:
    """Which database, without its password: SQLite's file, or PostgreSQL's user@host:port/name."""
    if database["ENGINE"].endswith("sqlite3"):
        return f"SQLite, {shown_path(Path(database['NAME']))}"
    where = f"{database.get('HOST') or 'localhost'}:{database.get('PORT') or 5432}"
    user = f"{database['USER']}@" if database.get("USER") else ""
    return f"PostgreSQL, {user}{where}/{database['NAME']}"


def endpoint_lines() -> list[str]:
    """The model endpoint the form's `endpoint` backend calls, when one is set: its address
    without a password, and its model or why a run on it would be refused. Whoever set
    MINUTES_MODEL_BASE_URL sees it was taken."""
    if not settings.MODEL_BASE_URL:
        return []
    shown = redact.without_userinfo(settings.MODEL_BASE_URL)
    model = settings.MODELS.get("MINUTES_MODEL") or settings.MODELS.get("OPENAI_MODEL")
    if not model:
        said = "no model named: set MINUTES_MODEL"
    elif why := runs.endpoint_unusable():  # rare: the refusal in full, however long
        said = f"refused: {why}"
    else:
        said = f"model {model}, for the endpoint backend"
    return [f"  endpoint:    {shown} ({said})"]


class Command(BaseCommand):
    help = "Run Minutes locally: database, a login, workers, the web server and a sample run."

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.children: list[Child] = []
        self.broker: EmbeddedRedis | None = None
        # Set once stopping has begun (a second Ctrl-C then hurries it, and interrupts nothing).
        self.stopping = self.hurry = False
        # Set while a child starts, and when a stopping signal came meanwhile (see launch).
        self.starting = self.held = False

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--port", type=port, default=8000, help="the web server's port (default: 8000)"
        )
        # Choices, so that argparse refuses one the team lacks before anything is done: it was
        # found as the sample run started, with everything else started (and a traceback).
        parser.add_argument(
            "--scenario",
            choices=SCENARIOS,
            default=TEAMS[TEAM].default_scenario,
            metavar="NAME",
            help=f"the sample run's scenario, one of {TEAM}'s (default: %(default)s): "
            + ", ".join(SCENARIOS),
        )
        parser.add_argument("--no-sample", action="store_true", help="start no sample run")
        parser.add_argument("--workers", type=workers, default=2, help="worker processes")
        parser.add_argument(
            "--model",
            choices=["scripted", "local", "endpoint"],
            default="scripted",
            help="the sample run's model: scripted, the local model server (started here and "
            "stopped with the rest), or the endpoint at MINUTES_MODEL_BASE_URL",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEBUG:
            # runserver serves the styles and scripts only in debug, and the login printed
            # below is for one machine: this is no way to run Minutes for a team. A refused
            # setting exits 2, as config/settings.py's own refusals do.
            raise refused(
                "demo is for a development machine: run it with MINUTES_DEBUG=1 (`make run` "
                "does); docker-compose.yml runs Minutes in production"
            )
        if options["model"] == "endpoint" and (why := runs.endpoint_unusable()):
            # Its sample run would fail three times and wait in the dead-letter queue.
            raise refused(f"--model endpoint: {why}")
        model: local_model.LocalModelServer | None = None
        if options["model"] == "local":
            # Said before anything starts, as for the endpoint: it was found after the
            # database was migrated and the login made (an address it cannot serve on, with a
            # traceback).
            try:
                model = local_model.LocalModelServer()
            except local_model.LocalModelError as exc:
                raise CommandError(f"--model local: {exc}") from None
            if why := local_model.missing():
                raise CommandError(f"--model local: {why}")
        self.port: int = options["port"]
        refuse_the_local_models_port(self.port)
        refuse_a_second_demo()
        refuse_a_busy_port(self.port)
        refuse_a_silent_broker()
        settings.HOME.mkdir(parents=True, exist_ok=True)
        self.lock = hold_the_home(self.port)  # for as long as this command runs
        self.logs = settings.HOME / "logs"
        self.logs.mkdir(exist_ok=True)
        self.say("preparing the database ...")
        try:
            call_command("migrate", verbosity=0)
        except KeyboardInterrupt:
            # Before anything was started, where Django's traceback ended it: each migration
            # is a transaction of its own, so the next demo (or migrate) takes up from there.
            self.say("\nstopped while preparing the database; nothing was started")
            raise SystemExit(130) from None
        # Ctrl-C, a closed terminal or a polite kill all stop everything, even when whoever
        # started us in the background told us to ignore SIGINT.
        for signum in STOPPING_SIGNALS:
            signal.signal(signum, self.on_signal)
        try:
            if model is not None:
                self.say(f"starting the local model server at {model.base} ...")
                try:
                    model.start()
                except local_model.LocalModelError as exc:
                    raise CommandError(str(exc)) from None
                os.environ["MINUTES_LOCAL_MODEL_URL"] = model.base  # for the workers
            self.start_broker()
            self.say("starting the workers and the web server ...")
            self.start_workers(options["workers"])
            self.start_child(
                "web server",
                [sys.executable, "manage.py", "runserver", f"127.0.0.1:{self.port}", "--noreload"],
            )
            self.wait_for_web()
            sample = None if options["no_sample"] else self.sample(options)
            self.first_screen(sample, asked_for_none=options["no_sample"])
            self.watch()
        except KeyboardInterrupt:
            self.say("\nstopping ...")
        finally:
            self.stop_all()
            if model is not None:
                model.stop()
            self.say("stopped.")
            # Nothing is left to stop: a Ctrl-C pressed now would find Python's handler gone as
            # it exits (it restores the default) and end a clean stop with status -2.
            for signum in STOPPING_SIGNALS:
                signal.signal(signum, signal.SIG_IGN)

    # --- what a newcomer sees ----------------------------------------------------------------

    def first_screen(self, sample: str | None, asked_for_none: bool = False) -> None:
        """The block saying where to look, and the demo login, made only here, with its
        password shown in the block: made as the database was prepared, a demo that failed or
        was stopped before this screen left a login whose password nobody saw, and every demo
        after it said the password "was shown the first time"."""
        base = f"http://127.0.0.1:{self.port}"
        users = get_user_model()
        password = None
        if not users.objects.filter(username=USER).exists():
            password = secrets.token_urlsafe(12)
        lines = [f"Minutes is running at {base}/"]
        if password:
            lines.append(f"  log in:      user {USER!r}, password {password!r} (shown once)")
        else:
            # The python to type is this one (the virtualenv's): the system's may have no
            # Django. On a line of its own, where one line said both in 86 columns.
            python = shown_path(Path(sys.executable))
            lines += [
                f"  log in:      user {USER!r} (its password was shown the first time)",
                f"  forgot it?   {python} manage.py changepassword {USER}",
            ]
        if sample:
            lines.append(f"  sample run:  {base}/runs/{sample}/")
        elif not asked_for_none:
            # Started again on a database that has runs: no new sample (the list would grow by
            # one a restart), which the screen says, where it said nothing of runs at all.
            held = RunSummary.objects.count()
            lines.append(f"  runs:        {base}/ ({held} here, so no new sample run)")
        # Which database and broker: someone who set DATABASE_URL or CELERY_BROKER_URL sees
        # they were taken, and that Ctrl-C leaves a broker of their own running.
        if settings.EMBEDDED_BROKER:
            broker = f"the embedded Redis ({shown_path(settings.BROKER_DIR)}/)"
            stops = "web server, workers, broker"
        else:
            broker = f"{sanitized(settings.CELERY_BROKER_URL)} (yours: left running)"
            stops = "web server, workers"
        lines += [
            f"  database:    {database_shown(settings.DATABASES['default'])}",
            *(
                ["  (searches fold ASCII case only here: manage.py check --database default)"]
                if folds_ascii_only("default")
                else []
            ),
            f"  broker:      {broker}",
            *endpoint_lines(),
            f"  logs:        {shown_path(self.logs)}/ (web.log, worker-1.log, ...)",
            f"  Ctrl-C stops everything it started ({stops}).",
        ]
        if os.geteuid() == 0:
            lines.append("  (as root: the worker logs warn of superuser privileges; expected)")
        width = max(len(line) for line in lines)
        # Everything that can fail is done: the login is made and shown with Ctrl-C held off
        # between the two (a Ctrl-C pressed meanwhile stops the demo right after the screen).
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOPPING_SIGNALS)
        try:
            if password:
                users.objects.create_superuser(USER, f"{USER}@localhost", password)
            self.say("")
            self.say("=" * width)
            for line in lines:
                self.say(line)
            self.say("=" * width)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    def say(self, line: str) -> None:
        # Flushed as written: piped to a file or `tee`, the screen must not wait for a buffer.
        self.stdout.write(line)
        self.stdout.flush()

    def sample(self, options: dict[str, Any]) -> str | None:
        """The sample run, started once per database: a restart adds nothing to the list."""
        if StoredEvent.objects.exists():
            return None
        return runs.start_run(TEAM, options["scenario"], by=USER, **SAMPLE[options["model"]])

    # --- the processes -----------------------------------------------------------------------

    def start_broker(self) -> None:
        if not settings.EMBEDDED_BROKER:
            return
        self.broker = EmbeddedRedis(settings.BROKER_DIR)
        self.say("starting the embedded broker ...")
        try:
            # Detached, so it keeps the queue while a worker restarts; stopped in stop_all (a
            # broker a command started before us is adopted and stopped too).
            self.broker.ensure()
        except BrokerError as exc:
            raise CommandError(str(exc)) from None

    def start_workers(self, count: int) -> None:
        """Start `count` workers of one process each; the first runs the beat.

        A run's next step is sent to its node, and a node of one process is the process where
        the run's flight waits (services/steps.py). The others are told a beat runs elsewhere,
        or each would warn that it revives nothing (config/celery.py).
        """
        for n in range(1, count + 1):
            self.start_child(
                f"worker {n}",
                worker_command(1, beat=n == 1, hostname=f"worker{n}@%h"),
                log=f"worker-{n}.log",
                env={} if n == 1 else {"MINUTES_BEAT_ELSEWHERE": "1"},
            )

    def start_child(
        self,
        name: str,
        command: list[str],
        log: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        # The home in every child's environment (the one it would use anyway): runserver's
        # command line does not name it, and what a demo left running is found by its home.
        env = {"MINUTES_HOME": str(settings.HOME), **(env or {})}
        child = Child(name, command, self.logs / (log or f"{name.split()[0]}.log"), env)
        # Listed first: a Ctrl-C as it starts still finds it to stop.
        self.children.append(child)
        self.launch(child)

    def launch(self, child: Child) -> None:
        """Start `child` with no stopping signal raised between its process and its record.

        Raised inside Popen, or between its return and `proc` being set, a Ctrl-C left a
        process nobody knew to stop (CI found the web server's port taken after the demo
        exited 0). The signal is held (on_signal) and raised once the process is recorded.
        Blocking it (pthread_sigmask) would not do: the child inherits the mask, and the web
        server and workers would start deaf to the SIGTERM that stops them.
        """
        self.starting = True
        try:
            child.start()
        finally:
            self.starting = False
        if self.held:
            self.held = False
            self.stopping = True
            raise KeyboardInterrupt

    def wait_for_web(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            self.supervise()
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        raise CommandError(
            f"the web server did not listen on port {self.port} within 30 s "
            f"(see {self.logs / 'web.log'})"
        )

    def watch(self) -> None:
        while True:
            self.supervise()
            time.sleep(0.5)

    def supervise(self) -> None:
        """Restart what died, unless it keeps dying; the broker first, as the others need it."""
        if self.broker is not None and not self.broker.ping():
            self.say("the broker stopped: restarting it")
            try:
                self.broker.ensure()
            except BrokerError as exc:
                self.stderr.write(f"the broker cannot be restarted: {exc}")
        now = time.monotonic()
        for child in self.children:
            if child.given_up or child.proc is None or child.proc.poll() is None:
                continue
            status = child.proc.returncode
            child.deaths.append(now)
            while child.deaths and now - child.deaths[0] > RESTART_WINDOW:
                child.deaths.popleft()
            if len(child.deaths) > RESTARTS:
                child.given_up = True
                self.stderr.write(
                    f"the {child.name} exited {len(child.deaths)} times in a minute; left "
                    f"stopped (see {child.log}). The rest keeps running."
                )
                continue
            self.say(f"the {child.name} exited with status {status}: restarting it")
            self.launch(child)

    def on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.stopping:
            # Ctrl-C again while stopping: raising here interrupted the cleanup, which left
            # processes running and printed a traceback. It is told to hurry instead.
            self.hurry = True
            return
        if self.starting:
            self.held = True  # raised by launch once the child's process is recorded
            return
        self.stopping = True
        raise KeyboardInterrupt

    def stop_all(self) -> None:
        """Every child is asked to stop (SIGTERM) and given 10 s, or until Ctrl-C is pressed
        again; then what is left is killed, and the broker is shut down (saving its queue)."""
        self.stopping = True
        for child in self.children:
            child.terminate()
        deadline = time.monotonic() + 10
        while any(child.running() for child in self.children):
            if self.hurry or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        if self.hurry:
            self.say("still stopping: killing what is left ...")
        for child in self.children:
            child.kill()
        if self.broker is not None:
            self.broker.stop()
