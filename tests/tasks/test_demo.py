"""`manage.py demo` end to end on the embedded broker: the first screen, a sample run flown to
its verdict, a worker that dies is restarted while the web server keeps serving, a restart adds
no second sample, and Ctrl-C stops every process it started."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest
from django.db import connections

from services import runs
from tests.services import free_port, left_running
from tests.tasks.conftest import ROOT, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


class Demo:
    """`manage.py demo` as a child process, its output collected line by line."""

    def __init__(self, env: dict[str, str], port: int, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "manage.py", "demo", "--port", str(port), "--workers", "1", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.lines: list[str] = []
        threading.Thread(target=self.read, daemon=True).start()

    def read(self) -> None:
        for line in self.proc.stdout:
            self.lines.append(line)

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait_for(self, pattern: str, timeout: float = 90) -> re.Match[str]:
        def found():
            if self.proc.poll() is not None:
                raise AssertionError(f"demo exited {self.proc.returncode}:\n{self.output}")
            return re.search(pattern, self.output)

        return wait_until(found, timeout, f"{pattern!r} in demo's output:\n{self.output}")

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)  # what Ctrl-C sends
        return self.proc.wait(30)


def demo_env(home: Path, database_url: str) -> dict[str, str]:
    """A demo's environment: this one's, its home and database, output unbuffered (read as it
    comes), and the embedded broker (no server), which demo starts and stops."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "MINUTES_HOME": str(home),
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("CELERY_BROKER_URL", None)
    return env


def environ_of(pid: str) -> bytes:
    try:
        with open(f"/proc/{pid}/environ", "rb") as file:
            return file.read()
    except OSError:  # it ended meanwhile
        return b""


def get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=10) as page:
        return page.status


def test_demo_flies_a_sample_run_survives_a_dead_worker_and_stops_cleanly(tmp_path):
    port = free_port()
    home = tmp_path / "home"
    env = demo_env(home, f"sqlite:///{connections['default'].settings_dict['NAME']}")
    for name in ("MINUTES_MODEL_BASE_URL", "OPENAI_BASE_URL"):
        env.pop(name, None)  # no model endpoint either
    demo = Demo(env, port)
    try:
        run_id = demo.wait_for(r"sample run:\s+\S+/runs/(r-[0-9a-f]+)/").group(1)
        screen = demo.output
        # The first screen ends with the block a newcomer needs, and nothing after it.
        assert re.search(r"log in:\s+user 'demo', password '\S{16}' \(shown once\)", screen)
        assert f"http://127.0.0.1:{port}/" in screen
        assert "database:    SQLite, " in screen
        assert "searches fold ASCII case only" not in screen  # SQLite folds every letter
        assert "broker:      the embedded Redis (" in screen
        assert "endpoint:" not in screen  # none set
        assert "Ctrl-C stops everything it started (web server, workers, broker)." in screen
        assert "superuser privileges" not in screen.split("Minutes is running")[0]
        wait_until(lambda: runs.status_of(run_id) != "running", 90, "the sample run to finish")
        assert runs.status_of(run_id) == "done"
        assert (home / "broker" / "appendonly.aof").is_file()  # the queue was the embedded Redis
        assert get(f"http://127.0.0.1:{port}/login") == 200

        # A worker killed outright is restarted; the web server never stops serving.
        workers = subprocess.run(
            ["pgrep", "-f", "celery -A config worker"], capture_output=True, text=True
        ).stdout.split()
        mine = [pid for pid in workers if str(home).encode() in environ_of(pid)]
        assert mine, workers
        os.killpg(os.getpgid(int(mine[0])), signal.SIGKILL)
        demo.wait_for(r"the worker \d+ exited with status -?\d+: restarting it", 30)
        assert get(f"http://127.0.0.1:{port}/healthz") == 200

        # A second demo from the same home, on another port, is refused before it starts
        # anything: stopping it used to stop the broker this one was using.
        second = subprocess.run(
            [sys.executable, "manage.py", "demo", "--port", str(free_port()), "--workers", "1"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 2, second.stdout + second.stderr  # refused, as bad input
        assert "Minutes is already running from " in second.stderr
        assert f"(http://127.0.0.1:{port}/, process {demo.proc.pid})" in second.stderr
        assert "the broker stopped" not in demo.output
        assert get(f"http://127.0.0.1:{port}/healthz") == 200
    finally:
        assert demo.stop() == 0, demo.output
    assert "stopped." in demo.output
    assert left_running(str(home)) == [], "processes the demo started are still running"

    # Started again on the same database: no password to print, no second sample run.
    again = Demo(env, port)
    try:
        again.wait_for(r"Ctrl-C stops everything")
        # The python to type is the one demo runs on (the system's may have no Django).
        python = (
            os.path.relpath(sys.executable, ROOT)
            if sys.executable.startswith(str(ROOT))
            else sys.executable
        )
        assert f"forgot it?   {python} manage.py changepassword demo" in again.output
        assert "sample run:" not in again.output
        assert re.search(
            r"runs:\s+http://127.0.0.1:\d+/ \(1 here, so no new sample run\)", again.output
        )
        assert "password '" not in again.output
    finally:
        assert again.stop() == 0, again.output
    assert left_running(str(home)) == []


def test_a_busy_port_is_refused_before_anything_starts_with_the_command_to_use(settings, tmp_path):
    import socket

    from django.core.management import CommandError, call_command

    settings.DEBUG = True
    settings.HOME = tmp_path / "home"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(CommandError) as refused:
            call_command("demo", "--port", str(port))
    said = str(refused.value)
    assert refused.value.returncode == 2  # bad input, as argparse's refusals
    assert f"port {port} is in use" in said
    assert f"make run PORT={port + 1}" in said and f"--port {port + 1}" in said
    assert not settings.HOME.exists()  # no broker, no logs, nothing started


def test_the_local_models_port_is_refused_for_minutes_before_anything_starts(settings, tmp_path):
    """make run PORT=8765 put Minutes where the local model's server listens: a run on the
    local backend then asked Minutes for its answers."""
    from django.core.management import CommandError, call_command

    settings.DEBUG = True
    settings.HOME = tmp_path / "home"
    settings.MODELS = {**settings.MODELS, "MINUTES_LOCAL_MODEL_URL": "http://127.0.0.1:8765/v1"}
    with pytest.raises(CommandError) as refused:
        call_command("demo", "--port", "8765")
    said = str(refused.value)
    assert refused.value.returncode == 2
    assert said.startswith("port 8765 is where the local model's server listens")
    assert "make run PORT=8766" in said and "MINUTES_LOCAL_MODEL_URL" in said
    assert not settings.HOME.exists()


def test_a_demo_running_from_the_same_home_is_named_and_nothing_starts(settings, tmp_path):
    import fcntl

    from django.core.management import CommandError, call_command

    from dashboard.management.demo_checks import LOCK

    settings.DEBUG = True
    settings.HOME = tmp_path / "home"
    settings.HOME.mkdir()
    (settings.HOME / LOCK).write_text("4321 8035\n")
    with (settings.HOME / LOCK).open("r") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as the running demo holds it
        with pytest.raises(CommandError) as refused:
            call_command("demo", "--port", str(free_port()))
    assert "already running from " in str(refused.value)
    assert "(http://127.0.0.1:8035/, process 4321): open that one, or stop it" in str(refused.value)
    assert sorted(p.name for p in settings.HOME.iterdir()) == [LOCK]  # no logs, no broker
    assert (settings.HOME / LOCK).read_text() == "4321 8035\n"


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--port", "-1"], "argument --port: -1 is not a port (1 to 65535)"),
        (["--port", "70000"], "argument --port: 70000 is not a port (1 to 65535)"),
        (["--port", "0"], "argument --port: 0 is not a port (1 to 65535)"),
        (["--workers", "0"], "argument --workers: 0: at least one worker drives the runs"),
        (
            ["--workers", "10000"],
            "argument --workers: 10000: at most 32 (each worker is a process of its own)",
        ),
    ],
)
def test_a_port_or_worker_count_out_of_range_is_refused_before_anything_starts(
    settings, tmp_path, argv, said
):
    """--port -1 ended in a traceback (OverflowError from the port probe); --workers 0 started
    the web server and the sample run with nobody to fly it."""
    from django.core.management import CommandError, call_command

    settings.DEBUG = True
    settings.HOME = tmp_path / "home"
    with pytest.raises(CommandError) as refused:
        call_command("demo", *argv)
    assert said in str(refused.value)
    assert not settings.HOME.exists()
