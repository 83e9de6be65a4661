"""Pages, the API and /healthz while the database does not answer: a 503 that says so.

The requests are made in a process of its own whose DATABASE_URL names a PostgreSQL port
nothing listens on, with production's settings (DEBUG off, as a server runs): the connection
is really refused, nothing is stubbed.
"""

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
client.cookies["sessionid"] = "a" * 32  # a session to look up: the database is asked
asked = [
    ("page", "/", {}),
    ("htmx", "/", {"HTTP_HX_REQUEST": "true"}),
    ("api", "/api/runs", {"HTTP_AUTHORIZATION": "Bearer " + "t" * 40}),
    ("health", "/healthz", {}),
]
for name, path, headers in asked:
    answer = client.get(path, **headers)
    print(json.dumps({
        "name": name, "status": answer.status_code, "retry": answer.get("Retry-After"),
        "reswap": answer.get("HX-Reswap"),
        "type": answer["Content-Type"], "body": answer.content.decode(),
    }))
"""


@pytest.mark.slow
def test_with_the_database_out_of_reach_every_answer_is_a_503_that_says_so(tmp_path):
    production = {
        "MINUTES_DEBUG": "0",
        "MINUTES_SECRET_KEY": secrets.token_urlsafe(50),
        "MINUTES_SSL_REDIRECT": "0",
        "MINUTES_ALLOWED_HOSTS": "testserver",
    }
    done = without_a_database(REQUESTS, tmp_path, **production)
    assert done.returncode == 0, done.stderr
    answers = {a["name"]: a for a in map(json.loads, done.stdout.splitlines())}

    page = answers["page"]
    assert (page["status"], page["retry"]) == (503, "5")
    assert "<h1>The database did not answer</h1>" in page["body"]
    assert "Try again in a moment" in page["body"]
    assert "5432" not in page["body"] and "refused" not in page["body"]  # its words: the log's

    htmx = answers["htmx"]  # a poll's: the page's notice, out of band, and nothing else swapped
    assert (htmx["status"], htmx["retry"], htmx["reswap"]) == (503, "5", "none")
    notice = '<div id="outage" hx-swap-oob="innerHTML"><p class="message error">'
    assert notice in htmx["body"]
    assert "The database did not answer" in htmx["body"] and "<html" not in htmx["body"]

    api = answers["api"]
    assert (api["status"], api["retry"], api["type"]) == (503, "5", "application/json")
    assert json.loads(api["body"]) == {"detail": unavailable.SENTENCE}

    health = answers["health"]  # not "not migrated", which it said of a database it never reached
    assert health["status"] == 503
    assert health["body"] == (
        "the database does not answer (what its driver said is in the server's log)"
    )
    # Anyone may ask /healthz: the driver's words, which name the database's address, are
    # the log's.
    assert "/healthz: the database does not answer (" in done.stderr
    assert "refused" in done.stderr.split("/healthz: the database does not answer (")[1]


def test_any_other_failure_is_still_the_500():
    request = RequestFactory().get("/")
    try:
        raise RuntimeError("a bug")
    except RuntimeError:
        answer = unavailable.server_error(request)
    assert answer.status_code == 500 and "Retry-After" not in answer
