"""python manage.py demo: the main job — everything Minutes needs, running, with a sample run.

Migrates the database, creates a login (its password is printed once, when it is created),
starts a Celery worker (with the embedded scheduler for reconciliation) and the web server,
starts a sample team run, and prints where to look. Ctrl-C stops every process it started.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from argparse import ArgumentParser
from types import FrameType
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from tasks import local_model, runs

USER = "demo"
# A real model is slow and small here: a short leash (the scripted run needs none).
SAMPLE: dict[str, dict[str, Any]] = {
    "scripted": {},
    "local": {"model": "local", "allowance": 60_000, "max_turns": 3},
    "endpoint": {"model": "endpoint", "allowance": 60_000, "max_turns": 6},
}


class Command(BaseCommand):
    help = "Run Minutes locally: database, a login, a worker, the web server and a sample run."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--scenario", default="first-flight", help="the sample run's scenario")
        parser.add_argument("--no-sample", action="store_true", help="start no sample run")
        parser.add_argument("--workers", type=int, default=2, help="worker processes")
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
            # below is for one machine: this is no way to run Minutes for a team.
            raise CommandError(
                "demo is for a development machine: run it with MINUTES_DEBUG=1 (`make run` "
                "does); docker-compose.yml runs Minutes in production"
            )
        call_command("migrate", verbosity=0)
        password = self.login()
        self.children: list[subprocess.Popen[bytes]] = []
        self.names: list[str] = []
        signal.signal(signal.SIGTERM, self.on_signal)
        model: local_model.LocalModelServer | None = None
        try:
            if options["model"] == "local":
                model = local_model.LocalModelServer()
                self.stdout.write(f"starting the local model server at {model.base} ...")
                try:
                    model.start()
                except local_model.LocalModelError as exc:
                    raise CommandError(str(exc)) from None
                os.environ["MINUTES_LOCAL_MODEL_URL"] = model.base  # for the workers
            self.start_worker(options["workers"])
            self.start_web(options["port"])
            self.wait_for_web(options["port"])
            base = f"http://127.0.0.1:{options['port']}"
            self.stdout.write(f"Minutes is running at {base}/")
            if password:
                self.stdout.write(f"log in as {USER!r} with password {password!r} (shown once)")
            else:
                self.stdout.write(
                    f"log in as {USER!r} (`manage.py changepassword {USER}` sets a new password)"
                )
            if not options["no_sample"]:
                run_id = runs.start_run(
                    "repo-fix", options["scenario"], by=USER, **SAMPLE[options["model"]]
                )
                self.stdout.write(f"sample run {run_id}: {base}/runs/{run_id}/")
            self.stdout.write("Ctrl-C stops everything.")
            self.watch()
        except KeyboardInterrupt:
            self.stdout.write("stopping")
        finally:
            self.stop_children()
            if model is not None:
                model.stop()

    def login(self) -> str | None:
        """Create the demo user on first run; its password, or None if it already existed."""
        users = get_user_model()
        if users.objects.filter(username=USER).exists():
            return None
        password = secrets.token_urlsafe(12)
        users.objects.create_superuser(USER, f"{USER}@localhost", password)
        return password

    def spawn(self, name: str, command: list[str]) -> None:
        # A session of its own, so stopping it stops its children too (the worker's pool).
        self.children.append(
            subprocess.Popen(command, start_new_session=True, env=os.environ.copy())
        )
        self.names.append(name)

    def start_worker(self, workers: int) -> None:
        settings.HOME.mkdir(parents=True, exist_ok=True)
        self.spawn(
            "worker",
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--beat",
                "--schedule",
                str(settings.HOME / "celerybeat-schedule"),
                "--concurrency",
                str(workers),
                "--loglevel",
                "warning",
            ],
        )

    def start_web(self, port: int) -> None:
        self.spawn(
            "web server",
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        )

    def wait_for_web(self, port: int) -> None:
        import socket

        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            self.check_children()
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.2)
        raise CommandError(f"the web server did not listen on port {port} within 30 s")

    def check_children(self) -> None:
        for child, name in zip(self.children, self.names, strict=True):
            if child.poll() is not None:
                raise CommandError(f"the {name} exited with status {child.returncode}")

    def watch(self) -> None:
        while True:
            self.check_children()
            time.sleep(0.5)

    def on_signal(self, signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    def stop_children(self) -> None:
        for child in self.children:
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for child in self.children:
            try:
                child.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
