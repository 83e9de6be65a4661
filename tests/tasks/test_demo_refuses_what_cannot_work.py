"""`manage.py demo` stops before it starts anything, saying what is wrong and what to do, when
what it would start cannot work: `--model endpoint` where no endpoint is configured (as the
form and the API refuse such a run), or CELERY_BROKER_URL naming a broker that does not answer.
It used to start the web server and the workers and print "Minutes is running": with no
endpoint, a sample run that failed its step three times into the dead-letter queue; with no
broker, workers retrying in their logs and a sample run whose step nobody could queue."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from tests.services import free_port
from tests.tasks.conftest import ROOT


@pytest.mark.parametrize(
    "models, said",
    [
        ({}, "--model endpoint: no OpenAI-compatible endpoint is configured"),
        (
            {"MINUTES_MODEL_BASE_URL": "http://127.0.0.1:9/v1"},
            "--model endpoint: MINUTES_MODEL is not set (nor OPENAI_MODEL)",
        ),
    ],
)
def test_demo_on_an_endpoint_it_cannot_use_starts_nothing(tmp_path, models, said):
    # Exit status 2: the command's --model asked for what cannot work here (bad input).
    refused(tmp_path, ["--model", "endpoint"], models, said, status=2)


def test_demo_on_a_broker_that_does_not_answer_starts_nothing(tmp_path):
    port = free_port()  # nothing listens there
    broker = {"CELERY_BROKER_URL": f"redis://:TopSecretPw@127.0.0.1:{port}/0"}
    said = refused(
        tmp_path,
        [],
        broker,
        f"the broker at CELERY_BROKER_URL (redis://:**@127.0.0.1:{port}/0) does not answer",
    )
    assert "unset CELERY_BROKER_URL for the embedded one" in said and "TopSecretPw" not in said


def test_a_broker_url_without_a_password_is_shown_without_a_mask(tmp_path):
    port = free_port()
    broker = {"CELERY_BROKER_URL": f"redis://127.0.0.1:{port}/0"}
    refused(tmp_path, [], broker, f"(redis://127.0.0.1:{port}/0) does not answer")


def refused(tmp_path, args: list[str], environ: dict[str, str], said: str, status: int = 1) -> str:
    """What `manage.py demo ARGS` says on stderr as it refuses to start (it must), having
    started nothing, exiting with `status` (1: a broker that does not answer, no bad input)."""
    home = tmp_path / "home"
    database = tmp_path / "demo.sqlite3"
    ours = ("MINUTES_", "OPENAI_", "CELERY_", "DATABASE_URL")
    env = {k: v for k, v in os.environ.items() if not k.startswith(ours)}
    env.update(
        MINUTES_DEBUG="1",
        MINUTES_HOME=str(home),
        DATABASE_URL=f"sqlite:///{database}",
        **environ,
    )
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "demo", "--port", str(free_port()), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        # Not refused: it started its web server, workers and broker, which its Ctrl-C stops.
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    assert done.returncode == status, done.stdout + done.stderr
    assert said in done.stderr and "Traceback" not in done.stderr
    # Refused before the database was made or anything started: no logs, no broker, no run.
    assert not database.exists() and not (home / "logs").exists()
    return done.stderr


@pytest.mark.parametrize("given", [":WrongPw@", ""])
def test_a_broker_that_refuses_the_password_is_not_said_to_be_down(tmp_path, given):
    """A Redis server that runs and refuses the password (or wants one): demo said it did not
    answer and to start it, so people started a second Redis."""
    from config.broker import server_binary

    port = free_port()
    server = subprocess.Popen(
        [str(server_binary()), "--port", str(port), "--requirepass", "RightPw", "--save", ""],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):  # until it listens
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        broker = {"CELERY_BROKER_URL": f"redis://{given}127.0.0.1:{port}/0"}
        shown = f"redis://{':**@' if given else ''}127.0.0.1:{port}/0"
        said = refused(
            tmp_path,
            [],
            broker,
            f"the broker at CELERY_BROKER_URL ({shown}) answers but refused its authentication",
        )
        assert "does not answer" not in said and "WrongPw" not in said
        assert "put the password it expects in CELERY_BROKER_URL" in said
    finally:
        server.terminate()
        server.wait(10)


def test_a_scenario_the_sample_run_cannot_have_is_refused_before_anything_starts(tmp_path):
    """--scenario nope was only looked at as the sample run started: after the database was
    migrated, the login made and the broker, workers and web server started, and it ended in
    a traceback (RunError). argparse refuses it now, naming the scenarios there are."""
    # argparse's status for a bad argument, its words, no traceback, no database made
    said = refused(
        tmp_path,
        ["--scenario", "nope"],
        {},
        "argument --scenario: invalid choice: 'nope' (choose from ",
        status=2,
    )
    assert "'first-flight'" in said
    assert not (tmp_path / "home").exists()


def test_a_local_model_that_is_not_installed_is_refused_before_anything_starts(
    settings, tmp_path, monkeypatch
):
    """As --model endpoint is: it was found missing after the database was migrated and the
    login made."""
    from django.core.management import CommandError, call_command

    from services import local_model

    monkeypatch.setattr(local_model, "missing", lambda: "the local model server is not here")
    settings.DEBUG = True
    settings.HOME = tmp_path / "home"
    with pytest.raises(CommandError) as refused:
        call_command("demo", "--port", str(free_port()), "--model", "local")
    assert str(refused.value) == "--model local: the local model server is not here"
    assert not settings.HOME.exists()


def test_a_ctrl_c_while_the_database_is_prepared_is_said_in_a_line(settings, tmp_path, monkeypatch):
    """Ctrl-C during the first migrate came before demo's own handlers: Django's traceback."""
    from io import StringIO

    from django.core.management import call_command

    from dashboard.management.commands import demo

    def pressed(name: str, **options: object) -> None:
        assert name == "migrate"
        raise KeyboardInterrupt

    settings.DEBUG = True
    settings.HOME = tmp_path / "home"
    monkeypatch.setattr(demo, "call_command", pressed)
    out = StringIO()
    try:
        with pytest.raises(SystemExit) as stopped:
            call_command("demo", "--port", str(free_port()), stdout=out)
    except KeyboardInterrupt:  # as it went up before: caught, or pytest would stop here
        pytest.fail("the Ctrl-C went up to Django, which printed its traceback")
    assert stopped.value.code == 130
    assert out.getvalue().endswith(
        "preparing the database ...\n\nstopped while preparing the database; nothing was started\n"
    )
    assert list((settings.HOME / "logs").iterdir()) == []  # no broker, no worker, no server
