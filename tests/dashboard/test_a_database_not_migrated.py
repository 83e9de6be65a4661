"""A server started before `manage.py migrate` answers 503 saying so and what to run, pages
and API alike: every page was the 500 "Something went wrong", the API an HTML 500, and on
SQLite (whose missing table is an OperationalError) "the database did not answer".

The requests are made in a process of its own, with production's settings (DEBUG off, as a
server runs), on a database file that holds no table at all: nothing is stubbed."""

from __future__ import annotations

import json
import secrets

import pytest
from django.test import RequestFactory

from dashboard import unavailable
from tests.services import without_a_database

REQUESTS = """
import json, django
django.setup()
from django.test import Client
client = Client(raise_request_exception=False)
client.cookies["sessionid"] = "a" * 32  # a session to look up: its table is asked for
asked = [
    ("page", "/", {}),
    ("api", "/api/runs", {"HTTP_AUTHORIZATION": "Bearer " + "t" * 40}),
]
for name, path, headers in asked:
    answer = client.get(path, **headers)
    print(json.dumps({
        "name": name, "status": answer.status_code, "retry": answer.get("Retry-After"),
        "type": answer["Content-Type"], "body": answer.content.decode(),
    }))
"""


@pytest.mark.slow
def test_a_database_with_no_tables_is_a_503_that_says_to_migrate(tmp_path):
    production = {
        "MINUTES_DEBUG": "0",
        "MINUTES_SECRET_KEY": secrets.token_urlsafe(50),
        "MINUTES_SSL_REDIRECT": "0",
        "MINUTES_ALLOWED_HOSTS": "testserver",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'empty.sqlite3'}",
    }
    done = without_a_database(REQUESTS, tmp_path, **production)
    assert done.returncode == 0, done.stderr
    answers = {a["name"]: a for a in map(json.loads, done.stdout.splitlines())}

    page = answers["page"]
    assert page["status"] == 503, page["body"][:500]
    assert "<h1>The database is not migrated</h1>" in page["body"]
    assert "manage.py migrate" in page["body"]

    api = answers["api"]
    assert (api["status"], api["type"]) == (503, "application/json")
    assert json.loads(api["body"]) == {"detail": unavailable.NOT_MIGRATED}


def test_another_failure_of_the_api_is_a_json_500():
    request = RequestFactory().get("/api/runs")
    try:
        raise RuntimeError("a bug")
    except RuntimeError:
        answer = unavailable.server_error(request)
    assert answer.status_code == 500 and answer["Content-Type"] == "application/json"
    assert "Retry-After" not in answer
