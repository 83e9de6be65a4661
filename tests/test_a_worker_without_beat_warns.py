"""A worker started without --beat says at its start that it revives no stalled run, and how to
start a beat: with none running anywhere, a run whose worker died stays stalled and nothing
said why. Quiet with --beat, and where the operator says a beat runs elsewhere (compose's beat
service, demo's first worker)."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from celery.signals import celeryd_after_setup

from config.broker import EmbeddedRedis
from config.celery import app, worker_command
from dashboard.management.commands import demo

ROOT = Path(__file__).resolve().parents[1]


def started(caplog, beat: object | None) -> list[str]:
    """What a worker (with this embedded beat, or None) logs as it finishes its setup."""
    with caplog.at_level(logging.WARNING, logger="config.celery"):
        celeryd_after_setup.send(
            sender="w1@host", instance=SimpleNamespace(beat=beat), conf=app.conf
        )
    return [r.getMessage() for r in caplog.records if r.name == "config.celery"]


def test_a_worker_without_beat_says_what_it_will_not_do_and_how_to_start_one(caplog, settings):
    settings.BEAT_ELSEWHERE = False
    [said] = started(caplog, None)
    assert said.startswith("worker w1@host runs no beat")
    assert "revives no stalled run" in said
    assert "celery -A config beat" in said and "--beat" in said
    assert "MINUTES_BEAT_ELSEWHERE=1" in said


def test_a_worker_with_beat_says_nothing(caplog, settings):
    settings.BEAT_ELSEWHERE = False
    assert started(caplog, object()) == []


def test_a_worker_told_a_beat_runs_elsewhere_says_nothing(caplog, settings):
    settings.BEAT_ELSEWHERE = True
    assert started(caplog, None) == []


def test_demos_other_workers_are_told_its_first_one_runs_the_beat(tmp_path, monkeypatch):
    monkeypatch.setattr(demo.Child, "start", lambda self: None)
    command = demo.Command()
    command.children, command.logs = [], tmp_path
    command.start_workers(3)
    first, *others = command.children
    # Every child carries the demo's home (how `left_running` finds them); only the others
    # are told the beat runs elsewhere.
    assert "--beat" in first.command and "MINUTES_BEAT_ELSEWHERE" not in first.env
    for child in others:
        assert "--beat" not in child.command
        assert child.env["MINUTES_BEAT_ELSEWHERE"] == "1"


@pytest.mark.slow
@pytest.mark.parametrize("beat", [False, True], ids=["without", "with"])
def test_a_real_worker_warns_only_without_beat(tmp_path, beat):
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k != "CELERY_BROKER_URL"}
    env |= {"MINUTES_HOME": str(home), "MINUTES_BEAT_ELSEWHERE": "0"}
    log = tmp_path / "worker.log"
    command = worker_command(1, beat=beat, schedule=tmp_path / "schedule")
    proc = subprocess.Popen(
        command,
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 90
        while "[queues]" not in log.read_text(errors="replace"):  # its banner: set up
            assert proc.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
        # The embedded beat's process can outlive a worker stopped in its first seconds.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        EmbeddedRedis(home / "broker").stop()
    warned = "runs no beat" in log.read_text(errors="replace")
    assert warned is not beat, log.read_text(errors="replace")
