"""A body the API cannot take is a 422 whose errors point at `["body", <field>]`, as a query's
point at `["query", <field>]`: django-ninja reads a body that is one schema parameter as an
object holding it under the parameter's name, and every body's errors pointed at
`["body", "body", <field>]` (the fork's: tests/dashboard/test_fork_api.py). What a client
sends is read as before."""

from __future__ import annotations

import json

import pytest

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]


@pytest.mark.parametrize(
    ("url", "body", "loc"),
    [
        ("/api/runs", {"team": 5}, ["body", "team"]),
        ("/api/runs", {"allowance": 0}, ["body", "allowance"]),
        ("/api/runs", {"teem": "solo"}, ["body", "teem"]),
        ("/api/runs", {"team": "support-desk", "order": "../x"}, ["body", "order"]),  # invalid()
        ("/api/runs/RUN/tags", {"add": 5}, ["body", "add"]),
        ("/api/runs/RUN/interrupt", {"reason": 5}, ["body", "reason"]),
        ("/api/review/conflicts/c-1/resolve", {"choice": 5, "reason": "r"}, ["body", "choice"]),
        ("/api/review/dead-letters/x/retry", {"reason": 5}, ["body", "reason"]),
        ("/api/intents/i-1", {"statement": "s", "reason": 5}, ["body", "reason"]),
    ],
)
def test_a_bodys_422_points_at_its_field(api, done_run, url, body, loc):
    answer = api.post(url.replace("RUN", done_run), json.dumps(body), "application/json")
    assert answer.status_code == 422, answer.content
    assert loc in [e["loc"][:2] for e in answer.json()["detail"]]


def test_a_missing_body_points_at_the_body(api, done_run):
    answer = api.post(f"/api/runs/{done_run}/fork", "", "application/json")
    assert answer.status_code == 422
    assert [e["loc"] for e in answer.json()["detail"]] == [["body"]]


def test_a_query_still_points_at_its_field(api, done_run):
    answer = api.get(f"/api/runs/{done_run}/events?limit=0")
    assert [e["loc"] for e in answer.json()["detail"]] == [["query", "limit"]]
