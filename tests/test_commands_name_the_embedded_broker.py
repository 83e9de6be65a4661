"""A manage.py command that falls back to the embedded broker (no CELERY_BROKER_URL) says so on
stderr, once, naming the variable: `start_run` used to queue its run there silently, where no
worker started with CELERY_BROKER_URL listens. demo (make run) and runserver keep quiet."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.db import connections

from config import broker, celery

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def embedded(settings, monkeypatch):
    """This process on the embedded broker, whose start is a no-op here."""
    settings.EMBEDDED_BROKER = True
    monkeypatch.setattr(broker.EmbeddedRedis, "ensure", lambda self: False)
    monkeypatch.setattr(celery, "fallback_note", None)
    monkeypatch.setattr(celery, "by_manage", False)
    return SimpleNamespace(conf=SimpleNamespace(broker_url=settings.CELERY_BROKER_URL))


def configured(command: str, sender) -> str:
    """What `manage.py COMMAND` says on stderr when Celery configures itself in it."""
    stderr = io.StringIO()
    celery.note_fallback(command, stderr)
    celery.start_embedded_broker(sender)
    return stderr.getvalue()


def test_a_command_on_the_embedded_broker_names_it_and_the_variable_to_set(embedded, settings):
    said = configured("start_run", embedded)
    assert said.count("\n") == 1
    assert settings.CELERY_BROKER_URL in said and "CELERY_BROKER_URL" in said
    assert said.startswith("broker: the embedded one")


@pytest.mark.parametrize("command", ["demo", "runserver"])
def test_demo_and_runserver_keep_quiet(embedded, command):
    assert configured(command, embedded) == ""


def test_a_command_given_a_broker_says_nothing(embedded, settings):
    settings.EMBEDDED_BROKER = False
    assert configured("start_run", embedded) == ""


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_start_run_says_it_on_stderr_and_its_output_stays_the_run_id(tmp_path):
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k != "CELERY_BROKER_URL"}
    env |= {
        "DATABASE_URL": f"sqlite:///{connections['default'].settings_dict['NAME']}",
        "MINUTES_HOME": str(home),
    }

    def start_run(**extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", "start_run", "--team", "solo"],
            cwd=ROOT,
            env=env | extra,
            capture_output=True,
            text=True,
            timeout=120,
        )

    embedded = broker.EmbeddedRedis(home / "broker")
    try:
        fallen_back = start_run()
        assert fallen_back.returncode == 0, fallen_back.stderr
        assert fallen_back.stdout.startswith("r-") and fallen_back.stdout.count("\n") == 1
        assert fallen_back.stderr == (
            f"broker: the embedded one ({embedded.url}), as CELERY_BROKER_URL is not set; "
            "set it to queue work where your workers listen\n"
        )
        named = start_run(CELERY_BROKER_URL=embedded.url)
        assert named.returncode == 0, named.stderr
        assert named.stderr == ""
    finally:
        embedded.stop()


def served(**environ: str) -> str:
    """What a web server (gunicorn loads config.wsgi) logs as it starts, with this environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "MINUTES_EAGER")}
    done = subprocess.run(
        [sys.executable, "-c", "import config.wsgi"],
        cwd=ROOT,
        env=env | {"MINUTES_DEBUG": "1", **environ},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_a_web_server_without_a_broker_says_where_its_runs_go_and_what_to_set():
    """gunicorn without CELERY_BROKER_URL queued every run on an embedded broker of its own,
    which the workers (started with CELERY_BROKER_URL) never read, and said nothing."""
    said = served()
    assert (
        "CELERY_BROKER_URL is not set: this web server queues runs on the embedded broker" in said
    )
    assert "must share one broker: set CELERY_BROKER_URL=redis://" in said


def test_a_web_server_given_a_broker_says_nothing_of_it():
    assert "CELERY_BROKER_URL" not in served(CELERY_BROKER_URL="redis://127.0.0.1:1/0")


def test_runserver_under_manage_keeps_quiet(embedded, settings, caplog):
    # make run's web server: its workers listen on the embedded broker with it.
    settings.CELERY_TASK_ALWAYS_EAGER = False
    celery.warn_a_web_server_on_the_embedded_broker()
    assert "CELERY_BROKER_URL is not set" in caplog.text  # as gunicorn would
    caplog.clear()
    celery.note_fallback("runserver", io.StringIO())
    celery.warn_a_web_server_on_the_embedded_broker()
    assert "CELERY_BROKER_URL" not in caplog.text
