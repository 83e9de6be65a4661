"""A query parameter an API operation does not take is a 422 naming it, and saying what the
operation takes: it was ignored unseen, so that `?agent=` on a run's events gave every agent's,
`?stauts=running` every run, and `POST /api/runs?team=...` started the body's team. What an
operation takes is what its schema lists, so the two cannot disagree."""

from __future__ import annotations

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoredEvent
from runtime.events import ModelCalled, TeamStarted

pytestmark = pytest.mark.django_db


def a_run() -> str:
    events = [
        TeamStarted(run_id="r-000000000abc", team="solo", scenario="", task="t"),
        ModelCalled(run_id="r-000000000abc", agent="coder", turn=1, messages=1),
        ModelCalled(run_id="r-000000000abc", agent="reviewer", turn=1, messages=1),
    ]
    DjangoJournal().append("run-r-000000000abc", events, 0)
    projection.catch_up()
    return "r-000000000abc"


@pytest.mark.parametrize(
    ("address", "name"),
    [
        ("/api/runs?stauts=running", "stauts"),
        ("/api/runs?page=2", "page"),
        ("/api/runs/r-000000000abc/events?agnet=coder", "agnet"),
        ("/api/runs/r-000000000abc/bill?after=3", "after"),
        ("/api/review/conflicts?status=open&colour=red", "colour"),
        ("/api/metrics?teem=solo", "teem"),
        ("/api/search?q=x&run=r-000000000abc&page=2", "page"),
    ],
)
def test_a_parameter_an_operation_does_not_take_is_a_422_naming_it(api, address, name):
    a_run()
    refused = api.get(address)
    assert refused.status_code == 422, refused.content
    [problem] = refused.json()["detail"]
    assert problem["loc"] == ["query", name]
    assert problem["msg"].startswith("no such parameter for GET here (it takes")


def test_one_that_takes_none_says_so(api):
    run = a_run()
    [problem] = api.get(f"/api/runs/{run}/bill?x=1").json()["detail"]
    assert problem["msg"] == "no such parameter for GET here (it takes none)"


def test_a_post_with_a_team_in_its_address_starts_nothing(api):
    before = (StoredEvent.objects.count(), RunSummary.objects.count())
    refused = api.post("/api/runs?team=support-desk", {}, content_type="application/json")
    assert refused.status_code == 422
    assert refused.json()["detail"][0]["loc"] == ["query", "team"]
    assert (StoredEvent.objects.count(), RunSummary.objects.count()) == before


def test_the_events_take_an_agent_as_the_page_does(api):
    run = a_run()
    got = api.get(f"/api/runs/{run}/events?agent=reviewer").json()
    assert [(e["kind"], e["agent"]) for e in got] == [("ModelCalled", "reviewer")]
    assert len(api.get(f"/api/runs/{run}/events").json()) == 3


def test_what_an_operation_takes_is_taken_and_pages_are_left_alone(api, as_owner):
    run = a_run()
    assert api.get(f"/api/runs/{run}/events?after=0&kind=ModelCalled&limit=5").status_code == 200
    assert api.get("/api/runs?status=&team=&limit=5&offset=0").status_code == 200
    assert api.head("/api/runs?limit=5").status_code == 200  # not a 422 (nor a 405)
    assert as_owner.get("/api/openapi.json?v=1").status_code == 200  # no operation: alone
    assert as_owner.get("/?whatever=1").status_code == 200  # the pages: not the API's rule


def test_nobody_signed_out_learns_what_an_operation_takes(client):
    """Checked after the operation's authentication: a 401, not a 422 listing its parameters."""
    refused = client.get("/api/runs?stauts=running")
    assert refused.status_code == 401 and "takes" not in refused.content.decode()
