"""The newcomer's path: a fresh clone, the README's first command, a login page.

Clones this repository into an empty folder (with the working tree's uncommitted changes laid
over it, so the test checks what is about to be committed), runs `make run` there with an
environment that knows nothing of ours, waits for the login page, then stops it the way a
person does, with Ctrl-C. It installs a fresh virtualenv (pip's cache makes that quick after
`make test` has filled it), so it is the slowest test in the suite, and earns it: the bugs it
catches (a folder that only our own checkouts had) are the first thing a newcomer meets.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sqlite3
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.services import free_port, left_running

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout


def fresh_clone(dest: Path) -> None:
    git("clone", "--quiet", "--no-hardlinks", str(ROOT), str(dest))
    changed = git("diff", "--name-only", "HEAD").split()
    untracked = git("ls-files", "--others", "--exclude-standard").split()
    for name in changed + untracked:
        source, target = ROOT / name, dest / name
        if source.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
        else:
            target.unlink(missing_ok=True)


def run_status(database: Path, run_id: str) -> str | None:
    """The run's status as its read model holds it (None before the projector has it)."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10) as db:
        row = db.execute("SELECT status FROM projection_run WHERE run_id = ?", [run_id]).fetchone()
    return row[0] if row else None


def status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as page:
            return page.status
    except (urllib.error.URLError, OSError):
        return None


def test_make_run_on_a_fresh_clone_serves_the_login_page_flies_the_sample_and_stops(tmp_path):
    dest = tmp_path / "minutes"
    fresh_clone(dest)
    assert not (dest / "var").exists() and not (dest / ".venv").exists()
    port = free_port()
    # The person's own environment (their pip settings, certificates, locale), but nothing of
    # this suite's: no DATABASE_URL, MINUTES_*, broker, Django settings or our virtualenv.
    ours = ("MINUTES_", "CELERY_", "DATABASE_URL", "DJANGO_", "VIRTUAL_ENV", "PYTHON", "PYTEST")
    env = {k: v for k, v in os.environ.items() if not k.startswith(ours)}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if ".venv" not in p)
    log = (tmp_path / "make-run.log").open("w")
    make = subprocess.Popen(
        ["make", "run", f"PORT={port}"],
        cwd=dest,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: Ctrl-C goes to the whole group
    )

    def output() -> str:
        return (tmp_path / "make-run.log").read_text(errors="replace")

    try:
        deadline = time.monotonic() + 600
        while status(f"http://127.0.0.1:{port}/login") != 200:
            assert make.poll() is None, f"make run exited {make.returncode}:\n{output()[-4000:]}"
            assert time.monotonic() < deadline, f"no login page after 600 s:\n{output()[-4000:]}"
            time.sleep(1)
        while "Ctrl-C stops everything" not in output():
            assert time.monotonic() < deadline, output()[-4000:]
            time.sleep(0.2)
        assert (dest / "var" / "minutes.sqlite3").is_file()
        assert "password '" in output()
        # The first screen is Minutes', not the installer's warnings.
        assert "BuildBackendWarning" not in output(), output()[:4000]
        # The sample run flies to its verdict on what `make run` installed, and nothing more
        # (the coder's pytest runs, in the sandbox, need their own tools installed too).
        sample = re.search(r"sample run:\s+\S+/runs/(r-[0-9a-f]+)/", output())
        assert sample, output()[-4000:]
        verdict = run_status(dest / "var" / "minutes.sqlite3", sample.group(1))
        while verdict in (None, "running"):
            assert time.monotonic() < deadline, f"the sample run is still {verdict}"
            time.sleep(1)
            verdict = run_status(dest / "var" / "minutes.sqlite3", sample.group(1))
        assert verdict == "done", (verdict, output()[-4000:])
    finally:
        os.killpg(make.pid, signal.SIGINT)
        try:
            make.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(make.pid, signal.SIGKILL)
            raise
    assert "stopped." in output()
    assert left_running(str(dest)) == [], "still running after Ctrl-C"
