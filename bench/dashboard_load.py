"""The dashboard bench's server and load: gunicorn, the concurrent clients, the signed-in
session they carry, the CPU accounting (bench/dashboard.py, bench/coordination_metrics.py).

Imported by each once Django is set up (the PostgreSQL CPU figure asks the
database where its cluster lives); it reads no arguments: what it needs is passed in.
"""

from __future__ import annotations

import http.client
import os
import resource
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


def session_cookie() -> tuple[Any, str]:
    """A user and a signed-in session, as the login view would leave them."""
    user, _ = get_user_model().objects.get_or_create(username="bench")
    store = SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    return user, f"{settings.SESSION_COOKIE_NAME}={store.session_key}"


def start_gunicorn(
    port: int, workers: int, env: dict[str, str], work: Path
) -> subprocess.Popen[bytes]:
    """gunicorn on `port` with `env` (the bench's settings, steps not run eagerly), logging
    into `work`, once it answers /healthz."""
    env = {k: v for k, v in os.environ.items() if k != "MINUTES_EAGER"} | env
    log = (work / "gunicorn.log").open("wb")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "config.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--timeout",
            "120",
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"gunicorn exited: {(work / 'gunicorn.log').read_text()[-2000:]}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                conn.close()
                return proc
        except OSError:
            pass
        time.sleep(0.1)
    stop(proc)
    raise RuntimeError("gunicorn did not answer /healthz within 60 s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)


@dataclass
class Result:
    latencies: list[float]  # seconds
    wall: float
    failures: list[tuple[str, int, bytes]]  # (path, status, start of the body)

    def p(self, q: int) -> float:
        """The q-th percentile in ms."""
        return statistics.quantiles(self.latencies, n=100, method="inclusive")[q - 1] * 1000

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.wall


def load(port: int, cookie: str, paths: list[str], clients: int) -> Result:
    """Every path once, `clients` at a time, each client on its own connection."""
    todo = iter(paths)
    lock = threading.Lock()
    latencies: list[float] = []
    failures: list[tuple[str, int, bytes]] = []
    headers = {"Cookie": cookie, "Accept": "text/html,application/json"}

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while True:
            with lock:
                path = next(todo, None)
            if path is None:
                break
            started = time.perf_counter()
            try:
                conn.request("GET", path, headers=headers)
                response = conn.getresponse()
                body = response.read()  # a response that closes the connection reopens it
                status = response.status
            except (OSError, http.client.HTTPException) as exc:
                conn.close()
                body, status = repr(exc).encode(), 0
            elapsed = time.perf_counter() - started
            with lock:
                latencies.append(elapsed)
                if not 200 <= status < 300:  # the polls answer 204 while nothing is new
                    failures.append((path, status, body[:300]))
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    started = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return Result(latencies, time.perf_counter() - started, failures)


def process_cpu(pid: int, reaped: bool) -> float:
    """CPU seconds of a live process, with those of the children it has reaped if asked."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = [int(x) for x in fields[11:15]]  # utime, stime, cutime, cstime
    return sum(ticks if reaped else ticks[:2]) / os.sysconf("SC_CLK_TCK")


def postgres_cpu(postgres: bool) -> float:
    """CPU seconds of the private PostgreSQL cluster: its postmaster, the backends it has reaped
    and the live ones. It is part of what is measured, not another process on the machine."""
    if not postgres:
        return 0.0
    with connection.cursor() as cursor:
        cursor.execute("SHOW data_directory")
        (data,) = cursor.fetchone()
    postmaster = int(Path(data, "postmaster.pid").read_text().split()[0])
    total = process_cpu(postmaster, reaped=True)
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1]) == postmaster:
                total += process_cpu(int(proc.name), reaped=False)
        except (OSError, ValueError):
            continue  # gone meanwhile
    return total


def cpu_seconds(postgres: bool) -> tuple[float, float]:
    """CPU seconds used so far: by the whole machine, and by what is measured here (this
    process, the children it has waited for: gunicorn and its workers once stopped, and the
    private PostgreSQL). Linux: /proc."""
    with open("/proc/stat") as stat:
        ticks = [int(x) for x in stat.readline().split()[1:9]]
    machine = (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # not idle, iowait
    own = postgres_cpu(postgres)
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        own += usage.ru_utime + usage.ru_stime
    return machine, own
