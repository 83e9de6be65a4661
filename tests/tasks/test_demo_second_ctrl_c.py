"""A second Ctrl-C while `manage.py demo` is stopping: the cleanup goes on, faster, and every
process demo started is stopped. It used to raise inside the cleanup: a traceback, and the web
server, a worker and the embedded broker left running."""

from __future__ import annotations

import contextlib
import signal
import time
from pathlib import Path

import psutil
import pytest
from django.db import connections

from config.broker import EmbeddedRedis
from tests.services import free_port, left_running
from tests.tasks.conftest import wait_until
from tests.tasks.test_demo import Demo, demo_env

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_a_second_ctrl_c_while_stopping_stops_everything_without_a_traceback(tmp_path):
    home = tmp_path / "home"
    env = demo_env(home, f"sqlite:///{connections['default'].settings_dict['NAME']}")
    demo = Demo(env, free_port(), "--no-sample")
    started: list[psutil.Process] = []
    try:
        demo.wait_for(r"Ctrl-C stops everything")
        # Everything it started: its children (the web server, the worker and its pool) and the
        # broker, which runs detached.
        started += psutil.Process(demo.proc.pid).children(recursive=True)
        broker = EmbeddedRedis(home / "broker").server_pid()
        assert broker is not None and len(started) >= 2, demo.output
        started.append(psutil.Process(broker))
        # The worker frozen: its SIGTERM waits for it to run again, so the stopping lasts
        # until the second Ctrl-C (or 10 s). Sent 20 ms after the first, the second could come
        # after a quick stop, as the process exited, where Python's handler was gone (status
        # -2, in CI). Not the web server: it has no handler of its own, and the kernel ends a
        # frozen process at once for a signal whose default is to end it.
        worker = next(
            p for p in psutil.Process(demo.proc.pid).children() if "worker" in p.cmdline()
        )
        # Once it catches SIGTERM: a worker still starting up has the default, which ends even
        # a frozen process at once (CI, once).
        wait_until(lambda: catches_sigterm(worker.pid), 60, "the worker's SIGTERM handler")
        worker.suspend()
        demo.proc.send_signal(signal.SIGINT)
        demo.wait_for(r"stopping \.\.\.")
        assert worker.is_running() and not zombie(worker)  # so demo is still stopping
        demo.proc.send_signal(signal.SIGINT)
        status = demo.proc.wait(30)
        time.sleep(0.2)  # the reader thread's last lines
        assert status == 0, demo.output
        assert "Traceback" not in demo.output
        assert "still stopping" in demo.output and demo.output.rstrip().endswith("stopped.")
        alive = [f"{p.pid} {p.name()}" for p in started if p.is_running() and not zombie(p)]
        assert alive == [], demo.output
        assert left_running(str(home), patience=0) == []
    finally:
        # Whatever it left, so that a failure here leaves nothing running on the machine.
        if demo.proc.poll() is None:
            demo.stop()
        for process in started:
            with contextlib.suppress(psutil.Error):
                process.kill()


def zombie(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def catches_sigterm(pid: int) -> bool:
    """Whether the process has a handler of its own for SIGTERM (Linux's SigCgt mask)."""
    status = Path(f"/proc/{pid}/status").read_text()
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
