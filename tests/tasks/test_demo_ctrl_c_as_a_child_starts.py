"""Ctrl-C landing while `manage.py demo` starts a child: the process Popen made is stopped with
the rest. Raised inside Popen, or between its return and the child's record, it left a process
nobody knew to stop: CI once found the web server's port still taken after the demo exited 0.
And every child names the demo's home in its environment, so that what a demo left running is
found even when its command line (runserver's) does not name it."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys

import pytest

from dashboard.management.commands import demo
from tests.services import free_port, left_running

pytestmark = pytest.mark.slow

# A stand-in for the web server: it holds a port until it is stopped.
SERVER = (
    "import socket, sys, time\n"
    "s = socket.socket()\n"
    "s.bind(('127.0.0.1', int(sys.argv[1])))\n"
    "s.listen()\n"
    "time.sleep(120)\n"
)


@pytest.fixture
def command(tmp_path, settings):
    settings.HOME = tmp_path / "home"
    command = demo.Command()
    command.logs = settings.HOME / "logs"
    command.logs.mkdir(parents=True)
    previous = signal.signal(signal.SIGINT, command.on_signal)
    try:
        yield command
    finally:
        signal.signal(signal.SIGINT, previous)
        command.stop_all()


def test_ctrl_c_as_popen_returns_leaves_nothing_running_and_the_port_free(
    command, settings, monkeypatch
):
    port = free_port()
    started: list[subprocess.Popen[bytes]] = []
    popen = subprocess.Popen

    def popen_then_ctrl_c(*args, **kwargs):
        proc = popen(*args, **kwargs)
        if not started:  # once: anything else this test starts is left alone
            started.append(proc)
            # Ctrl-C as Popen returns, before its caller has the process.
            os.kill(os.getpid(), signal.SIGINT)
        return proc

    monkeypatch.setattr(subprocess, "Popen", popen_then_ctrl_c)
    try:
        with pytest.raises(KeyboardInterrupt):
            command.start_child("web server", [sys.executable, "-c", SERVER, str(port)])
        monkeypatch.undo()
        command.stop_all()  # what the demo does on Ctrl-C
        assert len(started) == 1
        assert started[0].poll() is not None, "the process Popen started is still running"
        assert left_running(str(settings.HOME), patience=0) == []
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", port))  # raises when the port is still taken
    finally:
        # Whatever it left, so that a failure here leaves nothing running on the machine.
        for proc in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def test_every_child_names_the_home_so_what_is_left_running_is_found(command, settings):
    # runserver's command line names no home: only its environment can say whose it is. Port
    # 0, any free one: a port chosen first could be taken by another test before the child
    # bound it, and a child that exited at once was a zombie, whose environment says nothing.
    command.start_child("web server", [sys.executable, "-c", SERVER, "0"])
    (child,) = command.children
    assert child.proc is not None
    found = left_running(str(settings.HOME), patience=0)
    assert [line.split()[0] for line in found] == [str(child.proc.pid)]
    command.stop_all()
    assert left_running(str(settings.HOME), patience=0) == []
