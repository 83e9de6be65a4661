"""A refused request is written once to the web server's log: on debug settings (the demo's,
whose web.log it is) Django's own console handler and the root's both wrote every 4xx, so
web.log said "Bad Request: /import" twice before its request line. Run in a fresh process
with the project's settings, as the demo's web server is (the suite's settings are others)."""

from __future__ import annotations

import pytest

from tests.security.signin_helpers import fresh_process, good_key

pytestmark = pytest.mark.slow

ASK = """
import django
django.setup()
from django.test import Client
print(Client().get("/api/runs", secure=True).status_code, flush=True)
"""


@pytest.mark.parametrize("debug", ["1", "0"])
def test_a_refused_request_is_one_line_of_the_log(tmp_path, debug):
    found = fresh_process(
        ["-c", ASK],
        DJANGO_SETTINGS_MODULE="config.settings",
        MINUTES_DEBUG=debug,
        MINUTES_SECRET_KEY=good_key(),  # production refuses to start on none of its own
        MINUTES_HOME=str(tmp_path),
        MINUTES_ALLOWED_HOSTS="testserver",  # the test client's
    )
    assert found.returncode == 0, found.stderr[-2000:]
    assert found.stdout.strip() == "401"
    assert found.stderr.splitlines().count("Unauthorized: /api/runs") == 1, found.stderr
