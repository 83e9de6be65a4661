"""The benches' store (bench/production_env.py's setup) and the read they keep as it was
(bench/streams_setup.py's like_prefix, the baseline of store_scans.py and whole_reads.py).

setup sets Django up, so each case runs it in a process of its own, with an environment that
knows nothing of the suite's, and reports what Django was set up on."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from importlib.util import find_spec
from pathlib import Path

import pytest

from bench import production_env
from bench.production_env import require, setup
from bench.streams_setup import like_prefix
from journal_store.journal import DjangoJournal
from runtime.events import RunStarted
from tests import services
from tests.conftest import on_every_backend
from tests.services import find

ROOT = Path(__file__).resolve().parent.parent

REPORT = """
import json, sys
from bench.production_env import setup
store = setup("test", **json.loads(sys.argv[1]))
from django.conf import settings
from django.db import connections
print(json.dumps({
    "work": str(store.work),
    "postgres_url": store.postgres_url,
    "debug": settings.DEBUG,
    "home": str(settings.HOME),
    "env_settings": store.env["DJANGO_SETTINGS_MODULE"],
    "databases": {
        alias: [connections[alias].vendor, str(settings.DATABASES[alias]["NAME"])]
        for alias in settings.DATABASES
    },
}))
"""


def bench_env(**more: str) -> dict[str, str]:
    """The environment of a bench process: the suite's less its own settings, and `more`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MINUTES_", "DJANGO_"))}
    env.pop("CELERY_BROKER_URL", None)
    return env | {"PYTHONPATH": str(ROOT)} | more


def run_bench(argv: list[str], **more: str) -> subprocess.CompletedProcess[str]:
    """A bench (or a script as one) run to its end in a process of its own."""
    return subprocess.run(
        [sys.executable, *argv],
        cwd=ROOT,
        env=bench_env(**more),
        capture_output=True,
        text=True,
        timeout=120,
    )


def report(**kwargs: object) -> dict:
    done = run_bench(["-c", REPORT, json.dumps(kwargs)], DATABASE_URL="")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert not Path(found["work"]).exists()  # removed at the bench's exit
    return found


@pytest.mark.slow  # a process of its own, which sets Django up
def test_sqlite_is_a_file_in_the_benchs_own_dir_under_production_settings():
    found = report(sqlite="named.sqlite3")
    work = Path(found["work"])
    assert work.name.startswith("minutes-bench-test-")
    assert found["databases"] == {"default": ["sqlite", str(work / "named.sqlite3")]}
    assert found["debug"] is False
    assert found["home"] == str(work / "home")
    assert found["postgres_url"] is None


needs_postgres = pytest.mark.skipif(
    not (find("initdb") and find("pg_ctl")), reason="PostgreSQL's binaries are not installed"
)


@pytest.mark.slow  # a process of its own, which sets Django up
@needs_postgres
def test_postgres_is_a_private_cluster():
    found = report(postgres=True)
    assert found["postgres_url"].startswith("postgres://minutes@127.0.0.1:")
    assert found["databases"] == {"default": ["postgresql", "minutes"]}
    assert found["debug"] is False


@pytest.mark.slow  # a process of its own, which sets Django up
@needs_postgres
def test_beside_is_sqlite_and_the_cluster_as_the_second_database():
    found = report(beside=True)
    work = Path(found["work"])
    assert found["env_settings"] == "bench.two_databases"
    assert found["databases"] == {
        "default": ["sqlite", str(work / "bench.sqlite3")],
        "postgres": ["postgresql", "minutes"],
    }


def test_postgres_and_beside_together_are_refused_before_anything_starts(tmp_path):
    with pytest.raises(ValueError, match="postgres and beside"):
        setup("test", postgres=True, beside=True, work=tmp_path)
    assert list(tmp_path.iterdir()) == []


@on_every_backend()
def test_like_prefix_reads_what_read_prefix_reads(alias):
    """The baseline reads the same records as the read it is set beside: the names that start
    with the prefix exactly, '%' and '_' being characters, in the order they were written. (On
    SQLite the LIKE is blind to case, as the read was: no two names here differ by case.)"""
    journal = DjangoJournal(alias)
    names = ["worker-r1-a", "worker-r1_b", "worker-r10-c", "worker-r1%d", "worker-r2-e", "w-r1"]
    for n, name in enumerate(names):
        journal.append(name, [RunStarted(run_id=f"r{n}", agent="a", task="t")], 0)
    for prefix in ("worker-r1-", "worker-r1_", "worker-r1%", "worker-r1", "w"):
        expected = [(r.stream, r.position) for r in journal.read_prefix(prefix)]
        assert [(r.stream, r.position) for r in like_prefix(journal, prefix)] == expected, prefix
    assert [r.stream for r in like_prefix(journal, "worker-r1-")] == ["worker-r1-a"]


@pytest.fixture
def temp_dirs(monkeypatch):
    """The temp dir a process's mkdtemp makes its dirs in: one of this test's own, beside the
    system's rather than in pytest's (0700 under root), for a cluster run as the `postgres`
    account (the suite under root) to reach."""
    found = Path(tempfile.mkdtemp(prefix="minutes-test-tmp-"))
    found.chmod(0o755)
    monkeypatch.setattr(tempfile, "tempdir", str(found))
    yield found
    shutil.rmtree(found, ignore_errors=True)


def test_setup_leaves_no_temp_dir_when_there_is_no_postgresql(temp_dirs, monkeypatch):
    monkeypatch.setattr(services, "find", lambda binary: None)
    with pytest.raises(SystemExit, match="no PostgreSQL to measure on"):
        setup("no-postgres", postgres=True)
    assert list(temp_dirs.iterdir()) == []


@pytest.mark.slow  # initdb and pg_ctl
@needs_postgres
def test_a_cluster_that_cannot_start_leaves_nothing(temp_dirs, monkeypatch):
    """initdb done, pg_ctl's start refused: the data dir and the log were left."""
    with socket.socket() as taken:  # the port it is given is another's
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        monkeypatch.setattr(services, "free_port", lambda: taken.getsockname()[1])
        with pytest.raises(subprocess.CalledProcessError):
            services.start_postgres(durable=True)
    assert list(temp_dirs.iterdir()) == []  # neither its data nor its log


@pytest.mark.slow  # a process of its own, which sets Django up
@needs_postgres
def test_a_bench_that_fails_to_set_django_up_leaves_no_cluster_nor_temp_dir(temp_dirs):
    fails = json.dumps({"beside": True, "env": {"MINUTES_DEBUG": "x"}})
    done = run_bench(["-c", FAILS, fails], TMPDIR=str(temp_dirs))
    assert done.returncode != 0 and "MINUTES_DEBUG" in done.stderr, done.stderr
    assert list(temp_dirs.iterdir()) == []


@pytest.mark.slow  # a process of its own, and a cluster
@needs_postgres
def test_a_bench_stopped_by_sigterm_stops_its_cluster(temp_dirs):
    """`timeout` and a CI's cancel stop a bench with SIGTERM, which runs no atexit: the cluster
    went on running, its files in the temp dir, after the bench was gone."""
    bench = subprocess.Popen(
        [sys.executable, "-c", WAITS, json.dumps({"postgres": True})],
        cwd=ROOT,
        env=bench_env(TMPDIR=str(temp_dirs), DATABASE_URL=""),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert bench.stdout is not None
        url = bench.stdout.readline().strip()
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        bench.send_signal(signal.SIGTERM)
        assert bench.wait(60) == 128 + signal.SIGTERM
        assert [p.name for p in temp_dirs.iterdir() if p.name.startswith("minutes-pg-")] == []
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
    finally:
        bench.kill()
        for left in temp_dirs.glob("minutes-pg-*"):  # without the fix: stop what was left
            subprocess.run(
                [
                    *services.as_postgres_user(),
                    str(find("pg_ctl")),
                    "-D",
                    str(left / "data"),
                    "stop",
                ],
                capture_output=True,
            )


FAILS = """
import json, sys
from bench.production_env import setup
setup("fails", **json.loads(sys.argv[1]))
"""

WAITS = """
import json, sys, time
from bench.production_env import setup
store = setup("waits", **json.loads(sys.argv[1]))
print(store.postgres_url, flush=True)
time.sleep(120)
"""


def test_require_names_the_missing_module_and_the_extra_that_brings_it():
    with pytest.raises(
        SystemExit, match=r"no_such_module_x is not installed \(to test\): .*'\.\[serve\]'"
    ):
        require("no_such_module_x", "serve", "to test")
    require("json", "serve", "present")  # a module that is there: nothing said


@pytest.mark.skipif(find_spec("gunicorn") is not None, reason="gunicorn is installed here")
@pytest.mark.parametrize("bench", ["dashboard.py", "coordination_metrics.py"])
def test_a_bench_measured_against_gunicorn_stops_before_its_seed_without_it(bench, temp_dirs):
    """The dashboard bench seeded its runs (ten minutes at its default 10,000) and only then
    found gunicorn missing, in a traceback."""
    done = run_bench([str(ROOT / "bench" / bench), "--runs", "5"], TMPDIR=str(temp_dirs))
    assert done.returncode == 1
    assert "gunicorn is not installed" in done.stderr and "'.[serve]'" in done.stderr
    assert "seeding" not in done.stdout and "Traceback" not in done.stderr
    assert list(temp_dirs.iterdir()) == []  # no store was set up


BROKES = """
import json, shutil, sys
from bench.production_env import setup
store = setup("brokes", **json.loads(sys.argv[1]))
from config.celery import app
app.connection_for_write().ensure_connection(max_retries=3)  # as an enqueue: starts it
print(store.work / "home" / "broker" / "redis.sock", flush=True)
shutil.rmtree(store.work)  # as the benches do, before they exit
"""


@pytest.mark.slow  # a process of its own, which sets Django up and starts the broker
def test_a_bench_on_the_embedded_broker_leaves_no_broker_running(temp_dirs):
    """The first enqueue starts the embedded broker as a daemon that outlives its starter:
    each bench on it left a redis-server running on a socket in its removed temp dir."""
    done = run_bench(["-c", BROKES, "{}"], TMPDIR=str(temp_dirs), DATABASE_URL="")
    assert done.returncode == 0, done.stderr
    title = f" unixsocket:{done.stdout.strip()}"
    assert done.stdout.strip().startswith(str(temp_dirs))
    running = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                shown = (proc / "cmdline").read_bytes().split(b"\0")[0].decode()
            except OSError:
                continue
            if shown.endswith(title):
                running.append(int(proc.name))
    for pid in running:  # without the fix: stop what was left
        os.kill(pid, signal.SIGTERM)
    assert running == []


def test_stopping_the_embedded_broker_where_there_is_no_procfs_does_nothing(tmp_path, monkeypatch):
    """macOS has no /proc: the exit handler raised there, printed after a bench's figures."""
    monkeypatch.setattr(production_env, "PROCS", tmp_path / "no-proc")
    production_env.stop_embedded_broker(tmp_path / "redis.sock")  # no FileNotFoundError


def test_a_bench_told_to_keep_its_dir_keeps_it():
    """Each bench left its temp dir, a database of up to ~100 MB; one run with --keep must."""
    done = run_bench(["-c", REPORT, json.dumps({"keep": True})], DATABASE_URL="")
    assert done.returncode == 0, done.stderr
    work = Path(json.loads(done.stdout)["work"])
    try:
        assert work.is_dir()
    finally:
        shutil.rmtree(work, ignore_errors=True)
