"""A production start refuses a secret key nobody chose, and a bare start is production: the
key must be set, 50 characters or more, and not the placeholder from .env.example."""

from __future__ import annotations

import pytest

from tests.security.signin_helpers import ROOT, fresh_process, good_key

pytestmark = pytest.mark.slow

CHECK = ["manage.py", "check"]


def placeholder() -> str:
    """The key .env.example ships with, read from the file people copy."""
    for line in (ROOT / ".env.example").read_text().splitlines():
        if line.startswith("MINUTES_SECRET_KEY="):
            return line.split("=", 1)[1].strip()
    raise AssertionError(".env.example sets no MINUTES_SECRET_KEY")


def assert_refused(result, why: str) -> None:
    assert result.returncode != 0, result.stdout
    # manage.py says it in a line (config/commandline.py); a bare settings load (gunicorn,
    # celery) raises Django's ImproperlyConfigured.
    assert "ImproperlyConfigured" in result.stderr or result.stderr.startswith(
        "Minutes cannot start: "
    )
    assert f"MINUTES_SECRET_KEY {why}" in result.stderr, result.stderr[-2000:]


def test_production_refuses_a_short_secret_key(tmp_path):
    result = fresh_process(
        CHECK, MINUTES_DEBUG="0", MINUTES_SECRET_KEY="s3cret-but-short", MINUTES_HOME=str(tmp_path)
    )
    assert_refused(result, "is 16 characters")
    assert list(tmp_path.iterdir()) == []


def test_production_refuses_the_example_placeholder(tmp_path):
    result = fresh_process(
        CHECK, MINUTES_DEBUG="0", MINUTES_SECRET_KEY=placeholder(), MINUTES_HOME=str(tmp_path)
    )
    assert_refused(result, "is the placeholder from .env.example")


def test_production_refuses_a_long_key_of_one_repeated_character(tmp_path):
    result = fresh_process(
        CHECK, MINUTES_DEBUG="0", MINUTES_SECRET_KEY="x" * 64, MINUTES_HOME=str(tmp_path)
    )
    assert_refused(result, "is 64 characters of 1 kinds")


def test_a_bare_start_is_production(tmp_path):
    """No MINUTES_DEBUG at all (gunicorn or a worker started by hand): no debug, and so no
    start without a key of its own."""
    show = [
        "-c",
        "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)",
    ]
    keyed = fresh_process(
        show,
        DJANGO_SETTINGS_MODULE="config.settings",
        MINUTES_SECRET_KEY=good_key(),
        MINUTES_HOME=str(tmp_path),
    )
    assert keyed.returncode == 0, keyed.stderr
    assert keyed.stdout.strip() == "False"
    # What gunicorn (config.wsgi) and `celery -A config` do: load the settings, no manage.py.
    load = ["-c", "import django; django.setup()"]
    keyless = fresh_process(
        load, DJANGO_SETTINGS_MODULE="config.settings", MINUTES_HOME=str(tmp_path)
    )
    assert_refused(keyless, "must be set when MINUTES_DEBUG=0")


def test_manage_py_is_the_developers_entry_point_and_runs_with_no_settings(tmp_path):
    """On a fresh clone `python manage.py migrate` must work first thing; a deployment says
    MINUTES_DEBUG=0 for its commands and is held to a real key (the tests above)."""
    database = tmp_path / "db" / "fresh.sqlite3"
    result = fresh_process(
        ["manage.py", "migrate", "--verbosity", "0"],
        MINUTES_HOME=str(tmp_path / "home"),
        DATABASE_URL=f"sqlite:///{database}",
    )
    assert result.returncode == 0, result.stderr
    assert database.is_file()  # its folder did not exist: made on demand


def test_the_demo_will_not_run_on_production_settings(tmp_path):
    database = tmp_path / "demo.sqlite3"
    result = fresh_process(
        ["manage.py", "demo", "--no-sample"],
        MINUTES_DEBUG="0",
        MINUTES_SECRET_KEY=good_key(),
        MINUTES_HOME=str(tmp_path / "home"),
        DATABASE_URL=f"sqlite:///{database}",
    )
    assert result.returncode != 0 and "run it with MINUTES_DEBUG=1" in result.stderr
    assert not database.exists() and not (tmp_path / "home").exists()  # nothing migrated


PROBE = """
import django
django.setup()
from django.test import Client
for path in ("/healthz", "/login/"):
    answer = Client().get(path)
    print(path, answer.status_code, answer.get("Location", ""))
"""


def test_production_redirects_plain_http_but_the_health_check(tmp_path):
    """A container's probe asks over plain HTTP inside the TLS that fronts the app, and cannot
    follow a redirect to https (docker-compose.yml's web health check)."""
    result = fresh_process(
        ["-c", PROBE],
        DJANGO_SETTINGS_MODULE="config.settings",
        MINUTES_DEBUG="0",
        MINUTES_SECRET_KEY=good_key(),
        MINUTES_ALLOWED_HOSTS="testserver",
        MINUTES_HOME=str(tmp_path),
    )
    assert result.returncode == 0, result.stderr[-2000:]
    # answered here, whatever it says of the database this process was pointed at
    assert result.stdout.startswith(("/healthz 200 \n", "/healthz 503 \n")), result.stdout
    assert "/login/ 301 https://testserver/login/" in result.stdout
