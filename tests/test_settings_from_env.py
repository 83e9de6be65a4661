"""What config/settings.py makes of the environment: lists read as people write them, and values
that cannot be right refused at start, naming the variable."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from config import env
from tests.startup import refused


def started(*names: str, **environ: str) -> dict[str, object]:
    """These settings, as a process started with these environment variables has them."""
    env = {**os.environ, **environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    code = (
        "import json, django; django.setup(); from django.conf import settings; "
        f"print(json.dumps({{n: getattr(settings, n) for n in {list(names)!r}}}, default=str))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_host_names_and_origins_are_read_with_spaces_after_the_commas():
    # "localhost, 127.0.0.1" made " 127.0.0.1" a host name no request matched: a 400 for all.
    found = started(
        "ALLOWED_HOSTS",
        "CSRF_TRUSTED_ORIGINS",
        MINUTES_DEBUG="0",
        MINUTES_SECRET_KEY="k1-" + "abcdefgh" * 7,
        MINUTES_ALLOWED_HOSTS=" localhost, 127.0.0.1 ,,",
        MINUTES_CSRF_TRUSTED_ORIGINS="https://a.example, https://b.example",
    )
    assert found["ALLOWED_HOSTS"] == ["localhost", "127.0.0.1"]
    assert found["CSRF_TRUSTED_ORIGINS"] == ["https://a.example", "https://b.example"]


@pytest.mark.parametrize(
    "name, value, least",
    [
        # 0 had a worker's beat queue stalled runs 676 times in 20 s (19,282 messages).
        ("MINUTES_RECONCILE_SECONDS", "0", 1),
        ("MINUTES_STEP_LEASE_SECONDS", "-5", 1),
        ("MINUTES_STALL_SECONDS", "-1", 1),
        ("MINUTES_MAX_STEP_ATTEMPTS", "0", 1),
        ("MINUTES_VISIBILITY_TIMEOUT", "-1", 1),
        ("MINUTES_LOGIN_FAILURE_LIMIT", "0", 1),
        ("MINUTES_HSTS_SECONDS", "-1", 0),
    ],
)
def test_a_timing_or_a_limit_below_its_least_is_refused_naming_it(name, value, least):
    said = refused(MINUTES_DEBUG="0", MINUTES_SECRET_KEY="k1-" + "abcdefgh" * 7, **{name: value})
    assert f"{name} must be at least {least}, got {value}" in said


def test_no_hsts_is_still_a_choice():
    found = started(
        "SECURE_HSTS_SECONDS",
        MINUTES_DEBUG="0",
        MINUTES_SECRET_KEY="k1-" + "abcdefgh" * 7,
        MINUTES_HSTS_SECONDS="0",
    )
    assert found["SECURE_HSTS_SECONDS"] == 0


@pytest.mark.parametrize(
    "url, said",
    [
        # Taken for AMQP: "Cannot connect to amqp://guest:**@127.0.0.1%3A56379:5672//".
        ("127.0.0.1:56379", "got '127.0.0.1:56379' (it has no scheme: did you mean 'redis://"),
        ("amqp://guest:TopSecretPw@rabbit:5672//", "got 'amqp://guest:***@rabbit:5672//'"),
        ("bob:TopSecretPw@127.0.0.1:6379", "got 'bob:***@127.0.0.1:6379'"),
        ("sqs://AKIA:TopSecretPw@", "got 'sqs://AKIA:***@'"),
    ],
)
def test_a_broker_that_is_no_redis_server_is_refused_naming_it(monkeypatch, url, said):
    monkeypatch.setenv("CELERY_BROKER_URL", url)
    with pytest.raises(ImproperlyConfigured) as info:
        env.broker("CELERY_BROKER_URL")
    message = str(info.value)
    assert message.startswith("CELERY_BROKER_URL must name a Redis server: redis://HOST:PORT/DB")
    assert said in message and "TopSecretPw" not in message


def test_a_redis_password_that_cuts_the_url_short_is_named_and_hidden(monkeypatch):
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://:Top/SecretPw@127.0.0.1:6379/0")
    with pytest.raises(ImproperlyConfigured, match="holds '/', which must be percent-encoded"):
        env.broker("CELERY_BROKER_URL")


@pytest.mark.parametrize(
    "url",
    [
        "redis://:pw@127.0.0.1:6379/0",
        "rediss://redis.example:6380/1",
        "redis+socket:///srv/minutes/broker/redis.sock",
        "memory://",
    ],
)
def test_a_redis_server_is_taken(monkeypatch, url):
    monkeypatch.setenv("CELERY_BROKER_URL", url)
    assert env.broker("CELERY_BROKER_URL") == url


def test_the_settings_refuse_a_broker_without_a_scheme_at_start():
    said = refused(CELERY_BROKER_URL="127.0.0.1:56379")
    assert "CELERY_BROKER_URL must name a Redis server" in said


def test_the_beat_keeps_its_schedule_in_minutes_home(tmp_path):
    """`celery -A config worker --beat`, as docs/broker.md says, wrote celerybeat-schedule* into
    whichever folder it was started from."""
    found = started("CELERY_BEAT_SCHEDULE_FILENAME", MINUTES_HOME=str(tmp_path))
    assert found["CELERY_BEAT_SCHEDULE_FILENAME"] == str(tmp_path / "celerybeat-schedule")
    env = {**os.environ, "MINUTES_HOME": str(tmp_path), "MINUTES_DEBUG": "1"}
    code = "from config.celery import app; print(app.conf.beat_schedule_filename)"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert proc.stdout.strip() == str(tmp_path / "celerybeat-schedule"), proc.stderr


def test_a_beat_on_a_fresh_minutes_home_makes_it(tmp_path):
    """The schedule lives in MINUTES_HOME now; on a fresh one a beat died at its start
    (FileNotFoundError), where the folder it was started from always existed."""
    from config.celery import HomeScheduler, app

    assert app.conf.beat_scheduler == "config.celery:HomeScheduler"
    schedule = tmp_path / "fresh" / "home" / "celerybeat-schedule"
    scheduler = HomeScheduler(app=app, schedule_filename=str(schedule))
    try:
        assert schedule.parent.is_dir()
        assert list(schedule.parent.glob("celerybeat-schedule*"))
    finally:
        scheduler.close()


def test_an_effect_pending_wait_shorter_than_a_refund_can_take_is_refused_saying_why():
    said = refused(MINUTES_EFFECT_PENDING_SECONDS="60")
    assert "MINUTES_EFFECT_PENDING_SECONDS must be at least 180, got 60" in said
    assert "recorded as failed while the provider is still making it" in said


def test_the_effect_pending_floor_outlasts_the_desks_slowest_refund():
    from django.conf import settings

    from teams.desk.settings import DeskSettings

    def most(field: str) -> float:
        return next(m.le for m in DeskSettings.model_fields[field].metadata if hasattr(m, "le"))

    assert most("provider_latency") + most("tool_timeout") <= settings.EFFECT_PENDING_FLOOR
