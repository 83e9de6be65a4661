"""The embedded broker under a crowd: several processes start, interrupt and resume runs at
once while two workers drive them, and the broker itself is restarted mid-way. No worker
errors, every run ends done, and nothing is lost — what the filesystem transport could not do
(a worker read a half-written message file and died)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from django.db import connections

from config.broker import EmbeddedRedis
from journal_store.models import StoredEvent
from services import runs
from tests.tasks.conftest import ROOT, Workers, use_broker, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
CLIENTS = 3
# Each run: a start, two interrupts, two resumes; 150 operations in all. What is proved is that
# the three clients' operations and the two workers cross the restart: 20 runs each (300
# operations) proved nothing more than 10 and took twice as long (the workers drive every run).
RUNS_EACH = 10
# kombu's report of an ack the broker was not there to take, and its chained traceback, whose
# last exception is the connection's.
ACK_LOST = re.compile(
    r"^Couldn't ack '[^']+', reason:network:ConnectionError\n"
    r"(?:(?:Traceback \(most recent call last\):|  .*|\S+Error: .*"
    r"|During handling of the above exception, another exception occurred:"
    # The reconnection's own failure (the socket is gone) chained as the cause: seen on CI.
    r"|The above exception was the direct cause of the following exception:|)\n)*?"
    r"redis\.exceptions\.ConnectionError: .*\n(?!\n*(?:During handling|The above exception))",
    re.M,
)


@pytest.fixture
def embedded(settings):
    folder = Path(tempfile.mkdtemp(prefix="minutes-broker-"))
    broker = EmbeddedRedis(folder)
    broker.start()
    use_broker(broker.url, {"visibility_timeout": 8})
    try:
        yield broker
    finally:
        broker.stop()
        shutil.rmtree(folder, ignore_errors=True)
        use_broker(settings.CELERY_BROKER_URL, settings.CELERY_BROKER_TRANSPORT_OPTIONS)


def test_concurrent_starts_interrupts_and_resumes_survive_a_broker_restart(
    tmp_path, embedded, settings
):
    settings.WORKSPACES = tmp_path / "home" / "workspaces"
    workers = Workers(tmp_path, embedded.url, {"MINUTES_STALL_SECONDS": "10"})
    for _ in range(2):
        workers.start(concurrency=1)
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{connections['default'].settings_dict['NAME']}",
        "MINUTES_HOME": str(tmp_path / "home"),
        "CELERY_BROKER_URL": embedded.url,
    }
    logs = [tmp_path / f"client-{n}.log" for n in range(CLIENTS)]
    clients = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.tasks.stress_client", str(RUNS_EACH), str(log)],
            cwd=ROOT,
            env=env,
            stderr=subprocess.PIPE,
        )
        for log in logs
    ]
    try:
        # Mid-way, the broker goes down and comes back (saving and reloading its queue).
        wait_until(
            lambda: (
                StoredEvent.objects.filter(kind="TeamStarted").count() >= CLIENTS * RUNS_EACH // 3
            ),
            120,
            "a third of the runs to start",
            workers,
        )
        # Every client is still at work as the broker goes: the restart lands mid-way.
        assert all(client.poll() is None for client in clients)
        embedded.stop()
        time.sleep(0.5)
        embedded.start()
        for client in clients:
            _, err = client.communicate(timeout=300)
            assert client.returncode == 0, err.decode(errors="replace")[-3000:]
        text = "".join(log.read_text() for log in logs)
        started = re.findall(r"^run (\S+)$", text, re.M)
        assert len(started) == CLIENTS * RUNS_EACH
        assert "error " not in text, text  # no operation failed, not even during the restart
        wait_until(
            lambda: all(runs.status_of(r) not in ("running", "interrupted") for r in started),
            300,
            "every run to settle",
            workers,
        )
        assert {r: runs.status_of(r) for r in started} == dict.fromkeys(started, "done")
        for proc in workers.procs:
            assert proc.poll() is None, "a worker died:\n" + workers.logs()
        worker_logs = "\n".join(
            p.read_text(errors="replace") for p in tmp_path.glob("worker-*.log")
        )
        assert "Unrecoverable error" not in worker_logs
        # The one error a restart must cause: a step that ended while the broker was down
        # could not ack its message. That message stays unacked, is delivered again after the
        # visibility timeout, and its step is fenced (every run ended done, above).
        worker_logs = ACK_LOST.sub("", worker_logs)
        at = worker_logs.find("Traceback")
        assert at < 0, worker_logs[max(0, at - 500) : at + 3000]
    finally:
        for client in clients:
            if client.poll() is None:
                client.kill()
        workers.stop_all()


LOST_ACK_CHAINED = """\
Couldn't ack 'fb29a6e5', reason:network:ConnectionError
Traceback (most recent call last):
  File "/x/redis/_parsers/socket.py", line 101, in _read_from_socket
    raise ConnectionError(SERVER_CLOSED_CONNECTION_ERROR)
redis.exceptions.ConnectionError: Connection closed by server.

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/x/redis/connection.py", line 3204, in _connect
    sock.connect(self.path)
FileNotFoundError: [Errno 2] No such file or directory

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/x/kombu/message.py", line 131, in ack_log_error
    self.ack(multiple=multiple)
redis.exceptions.ConnectionError: Error 2 connecting to unix socket: /x/redis.sock.
"""


def test_a_lost_acks_report_is_recognised_whole_and_nothing_else_is():
    """CI saw the reconnection's failure chained as the cause ("The above exception was the
    direct cause"), which the pattern did not take: the stress test failed on an expected ack."""
    assert ACK_LOST.sub("", f"before\n{LOST_ACK_CHAINED}after\n") == "before\nafter\n"
    # Another traceback after it is still there to be found.
    other = "Traceback (most recent call last):\nValueError: not an ack\n"
    assert "Traceback" in ACK_LOST.sub("", LOST_ACK_CHAINED + other)
    # An ack whose chain goes on to something other than the connection is not taken.
    tail = "\nThe above exception was the direct cause of the following exception:\n\n" + other
    assert "Traceback" in ACK_LOST.sub("", LOST_ACK_CHAINED + tail)
