"""Real worker processes for the execution tests: Celery on Redis (or the embedded broker),
pointed at the test database, killed with SIGKILL when a test says so."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.db import connections

from config.celery import app as celery_app
from config.celery import worker_command
from services import runs

ROOT = Path(__file__).resolve().parents[2]
REDIS = os.environ.get("MINUTES_TEST_REDIS_URL")
needs_redis = pytest.mark.skipif(
    REDIS is None, reason="Redis is not available here (install redis-server)"
)


def use_broker(url: str, options: dict) -> None:
    """Point this process's Celery app at another broker (its pools are rebuilt on next use)."""
    import kombu.pools

    # Celery reads CELERY_BROKER_URL from the environment before its own settings (and the
    # suite sets it: tests/services.py), so the environment must say the same.
    os.environ["CELERY_BROKER_URL"] = url
    celery_app.conf.update(broker_url=url, broker_transport_options=options)
    kombu.pools.reset()  # kombu keeps producer pools per connection, process-wide
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@dataclass
class Workers:
    tmp: Path
    broker: str
    env_extra: dict[str, str] = field(default_factory=dict)
    procs: list[subprocess.Popen] = field(default_factory=list)
    # Short leases and a reconciler every second, for tests that are not about how long
    # recovery takes; False leaves the settings' defaults, for those that are.
    quick: bool = True
    app: str = "config"  # the Celery app the workers run (-A)

    @property
    def exec_log(self) -> Path:
        return self.tmp / "exec.log"

    def env(self) -> dict[str, str]:
        db = connections["default"].settings_dict["NAME"]
        quick = {
            "MINUTES_STEP_LEASE_SECONDS": "4",
            "MINUTES_VISIBILITY_TIMEOUT": "8",
            "MINUTES_RECONCILE_SECONDS": "1",
        }
        timings = ("MINUTES_STEP_LEASE_SECONDS", "MINUTES_VISIBILITY_TIMEOUT")
        timings += ("MINUTES_RECONCILE_SECONDS", "MINUTES_STALL_SECONDS")
        inherited = {k: v for k, v in os.environ.items() if self.quick or k not in timings}
        return {
            **inherited,
            "DATABASE_URL": f"sqlite:///{db}",
            "MINUTES_HOME": str(self.tmp / "home"),
            "CELERY_BROKER_URL": self.broker,
            **(quick if self.quick else {}),
            "MINUTES_EXEC_LOG": str(self.exec_log),
            **self.env_extra,
        }

    def start(self, concurrency: int = 2, **extra: str) -> subprocess.Popen:
        self.env_extra.update(extra)
        command = worker_command(
            concurrency,
            beat=True,
            schedule=self.tmp / f"beat-{len(self.procs)}",
            hostname=f"test{len(self.procs)}@%h",
        )
        command[command.index("-A") + 1] = self.app
        proc = subprocess.Popen(
            command,
            cwd=ROOT,
            env=self.env(),
            start_new_session=True,
            stdout=(self.tmp / f"worker-{len(self.procs)}.log").open("wb"),
            stderr=subprocess.STDOUT,
        )
        self.procs.append(proc)
        return proc

    def kill(self, proc: subprocess.Popen) -> None:
        """SIGKILL the worker and every process of its pool: nothing gets to clean up."""
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                self.kill(proc)

    def logs(self) -> str:
        return "\n".join(
            p.read_text(errors="replace")[-3000:] for p in sorted(self.tmp.glob("worker-*.log"))
        )


@pytest.fixture
def redis_workers(tmp_path, transactional_db, settings) -> Iterator[Workers]:
    if REDIS is None:
        pytest.skip("Redis is not available here (install redis-server)")
    import redis

    redis.Redis.from_url(REDIS).flushdb()
    use_broker(REDIS, {"visibility_timeout": 8})
    workers = Workers(tmp_path, REDIS)
    settings.WORKSPACES = tmp_path / "home" / "workspaces"  # for steps driven in this process
    try:
        yield workers
    finally:
        workers.stop_all()
        use_broker(settings.CELERY_BROKER_URL, settings.CELERY_BROKER_TRANSPORT_OPTIONS)


def wait_until(check, timeout: float, what: str, workers: Workers | None = None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = check()
        if result:
            return result
        time.sleep(0.1)
    logs = workers.logs() if workers else ""
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}\n{logs}")


def settled(run_ids: list[str]) -> bool:
    return all(runs.status_of(r) != "running" for r in run_ids)
