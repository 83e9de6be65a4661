"""Processes that need the embedded broker at once start one server between them.

Each looked for a server, found none, removed the socket file and started its own: three
processes at once left three redis-servers on one folder (six trials of six), sharing its
append-only file, and only the one its pid file named was ever stopped. Now the look and the
start hold the folder's lock, and the processes that wait for it find the server answering."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from config.broker import EmbeddedRedis

pytestmark = pytest.mark.slow
PROCESSES = 4


def ensure_when_all_are_ready(folder: str, ready, answers) -> None:
    """One process's start of the broker, once every other process is ready to start it too."""
    ready.wait()
    answers.put(EmbeddedRedis(Path(folder)).ensure())


def servers_on(folder: Path) -> list[int]:
    """The pids of the redis-servers running on the folder's socket, read from /proc: a
    server the pid file does not name is found too."""
    socket = os.fsencode(folder / "redis.sock")
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue  # it ended while we looked
        if b"redis-server" in command and socket in command:
            found.append(int(entry.name))
    return found


def test_processes_starting_the_broker_at_once_start_one_server():
    folder = Path(tempfile.mkdtemp(prefix="minutes-broker-"))
    context = multiprocessing.get_context("spawn")
    ready = context.Barrier(PROCESSES)
    answers = context.Queue()
    processes = [
        context.Process(target=ensure_when_all_are_ready, args=(str(folder), ready, answers))
        for _ in range(PROCESSES)
    ]
    try:
        for process in processes:
            process.start()
        started = sorted(answers.get(timeout=60) for _ in processes)
        for process in processes:
            process.join(10)
        assert [p.exitcode for p in processes] == [0] * PROCESSES
        assert started == [False] * (PROCESSES - 1) + [True]
        broker = EmbeddedRedis(folder)
        assert servers_on(folder) == [broker.server_pid()]
        broker.stop()
        assert servers_on(folder) == []
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()
        for pid in servers_on(folder):
            os.kill(pid, signal.SIGKILL)  # this test's own, left should it fail
        shutil.rmtree(folder, ignore_errors=True)
