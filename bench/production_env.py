"""The environment a bench runs Minutes in, and the database it runs it on.

production_env: production's settings (DEBUG off: with it on, Django records every query and
its parameters, which the figures would then include), over plain HTTP on 127.0.0.1, with a
throwaway secret key and a home of its own.

setup: what every bench that stores events does first, before its own imports of Django: a
temp dir of its own, SQLite in it or a private PostgreSQL cluster started from the installed
binaries (tests/services.py's, with fsync on), those settings, and Django set up on them.
Migrating is the bench's: some migrate a database a size, or to an older migration.

Imports nothing of Django at import: it is read before Django is set up."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import sys
import tempfile
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path


def require(module: str, extra: str, why: str) -> None:
    """Stop the bench at its start, saying what to install, when `module` is missing: a bench
    that needs it late (gunicorn, after a seed of minutes) would otherwise lose the seed."""
    import importlib.util

    if importlib.util.find_spec(module) is None:
        sys.exit(f"{module} is not installed ({why}): .venv/bin/pip install -e '.[{extra}]'")


def production_env(database_url: str, home: Path) -> dict[str, str]:
    return {
        "DATABASE_URL": database_url,
        "MINUTES_HOME": str(home),
        "MINUTES_DEBUG": "0",
        "MINUTES_SECRET_KEY": "bench-" + uuid.uuid4().hex + uuid.uuid4().hex,
        "MINUTES_SSL_REDIRECT": "0",  # plain HTTP with DEBUG off
        "MINUTES_ALLOWED_HOSTS": "127.0.0.1",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }


@dataclass(frozen=True)
class Store:
    work: Path  # the bench's temp dir: its SQLite files, and the store's home below it
    postgres_url: str | None  # the private cluster's, where one was started
    env: dict[str, str]  # production_env as set, without the bench's own variables: what a
    # server the bench starts is given

    @property
    def home(self) -> Path:
        return self.work / "home"


def setup(
    name: str,
    postgres: bool = False,
    *,
    sqlite: str = "bench.sqlite3",
    beside: bool = False,
    work: Path | None = None,
    env: dict[str, str] | None = None,
    keep: bool = False,
) -> Store:
    """Django set up on a store of the bench's own, and what the bench needs of it.

    name       the temp dir's: minutes-bench-<name>-...
    postgres   the database is a private PostgreSQL cluster (exits saying so where PostgreSQL
               is not installed); else SQLite's file `sqlite` in the temp dir
    beside     SQLite the default database and the cluster, where it is installed, the
               second one, "postgres" (bench/two_databases.py's settings): for the benches
               that measure both in one process
    work       a kept dir instead of a new one (a kept SQLite database)
    env        the bench's own variables, set over production's (MINUTES_EAGER, a broker)
    keep       the temp dir this makes outlives the bench (its --keep); else it is removed at
               exit, SIGTERM's too (a dir given as `work` is never removed)
    """
    from tests.services import start_postgres  # the private PostgreSQL cluster

    if postgres and beside:
        raise ValueError("setup: postgres and beside are two ways to measure PostgreSQL; one")
    made = work is None
    work = work or Path(tempfile.mkdtemp(prefix=f"minutes-bench-{name}-"))
    try:
        url = start_postgres(durable=True) if postgres or beside else None
        if postgres and not url:
            sys.exit(
                "PostgreSQL's initdb and pg_ctl are not installed: no PostgreSQL to measure on"
            )
        # Always: a bench that enqueues a step starts the embedded broker, a daemon in its home.
        stop_at_exit_on_sigterm()
        if made and not keep:
            # Registered first, so run last (atexit's order): each run left its dir, a
            # database of up to ~100 MB, in the temp dir.
            atexit.register(shutil.rmtree, work, ignore_errors=True)
        atexit.register(stop_embedded_broker, work / "home" / "broker" / "redis.sock")
        found = production_env(
            url if postgres and url else f"sqlite:///{work / sqlite}", work / "home"
        )
        if beside:
            # Production settings have one database; these add the cluster as the second.
            found["DJANGO_SETTINGS_MODULE"] = "bench.two_databases"
            if url:
                found["MINUTES_BENCH_POSTGRES_URL"] = url
        os.environ.update(found)
        os.environ.update(env or {})
        import django

        django.setup()
    except BaseException:
        # A bench that never ran keeps nothing: the dir it was given, were it told one.
        if made:
            shutil.rmtree(work, ignore_errors=True)
        raise
    return Store(work, url, found)


PROCS = Path("/proc")


def stop_embedded_broker(socket: Path) -> None:
    """Stop the embedded broker on `socket`, found by its process title, where one runs.

    Whoever first enqueues a step starts it as a daemon that outlives them (config/broker.py),
    so every bench on the embedded broker left one running, bound to a socket in a temp dir the
    bench had by then removed. Found by title, not by its pid file: that file is in the same
    removed dir, and redis-server names its socket in its title."""
    if not PROCS.is_dir():  # no procfs (macOS): nothing to scan; Linux is the target today
        return
    # Its title, written over its arguments: "<binary> unixsocket:<socket>" (NULs after).
    title = f" unixsocket:{socket}".encode()
    for proc in PROCS.iterdir():
        if not proc.name.isdigit():
            continue
        try:
            name = (proc / "comm").read_bytes().strip()
            shown = (proc / "cmdline").read_bytes().split(b"\0")[0]
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if name == b"redis-server" and shown.endswith(title):
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(proc.name), signal.SIGTERM)


def stop_at_exit_on_sigterm() -> None:
    """SIGTERM (`timeout`, a CI's cancel) ends the process as an exit does, so that atexit
    stops the cluster and removes its files: by default the signal ends it at once, and the
    cluster ran on after the bench, its data in the temp dir. Left alone where the bench has
    a handler of its own, or runs setup off the main thread (where none can be set)."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def exit_on(signum: int, frame: object) -> None:
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, exit_on)
