"""The pages and the API read through one query layer: the same runs for the same filters, and
events decoded (upcast) by the journal, never parsed from their stored JSON."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from django.test import Client

from dashboard import listing
from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime.events import ModelResponded, TeamFinished, TeamStarted
from runtime.events.base import Usage

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "runs"}


def stored_run(run_id: str, team: str, task: str, tokens: int, verdict: str | None) -> None:
    r = {"run_id": run_id}
    events = [
        TeamStarted(**r, team=team, scenario="s", task=task, config={"started_by": "owner"}),
        ModelResponded(**r, agent="coder", text="", tool_calls=[], usage=Usage(total=tokens)),
    ]
    if verdict:
        events.append(TeamFinished(**r, status=verdict))
    DjangoJournal().append(f"run-{run_id}", events, 0)


FILTERS = [
    {},
    {"status": "done"},
    {"status": "running"},
    {"team": "support-desk"},
    {"q": "slug"},
    {"q": "r-b"},
    {"sort": "tokens"},
    {"sort": "oldest", "status": "done"},
    # (a bad date or sort: the page reads it as no bound and the default order, the API
    # refuses it, 422 naming it: tests/dashboard/test_hostile_requests.py)
    {"since": "2000-01-01", "until": "2999-12-31", "sort": "findings"},
]


@pytest.mark.parametrize(
    "params", FILTERS, ids=lambda p: "&".join(f"{k}={v}" for k, v in p.items())
)
def test_the_page_and_the_api_list_the_same_runs_for_the_same_filters(params, as_owner, token):
    stored_run("r-a", "repo-fix", "fix the slug test", 300, "done")
    stored_run("r-b", "support-desk", "refund order 4471", 900, None)
    stored_run("r-c", "repo-fix", "rename a module", 100, "failed")
    stored_run("r-d", "repo-fix", "slugify titles", 500, "done")

    page = as_owner.get("/", params, **HTMX)
    shown = [run.run_id for run in page.context["runs"]]
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}").get("/api/runs", params)
    listed = [run["run_id"] for run in api.json()["items"]]
    built = [run.run_id for run in listing.runs(listing.RunFilter.of(params))]
    assert shown == listed == built
    assert page.context["chosen"] == listing.RunFilter.of(params)


def test_an_event_an_older_minutes_stored_is_shown_upcast_on_the_page_and_in_the_api(
    as_owner, token
):
    stored_run("r-old", "repo-fix", "fix", 10, None)
    projection.catch_up()
    # A ToolReturned as version 1 wrote it: the error as one string, never rewritten since.
    StoredEvent.objects.create(
        event_id="0" * 32,
        stream="run-r-old",
        version=3,
        run_id="r-old",
        kind="ToolReturned",
        v=1,
        agent="coder",
        data=json.dumps({"tool": "run_tests", "error": "ToolExit: runner exited 137"}),
        t=1_700_000_000.0,
        recorded_at=datetime.fromtimestamp(1_700_000_000.0, UTC),
    )

    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    [event] = api.get("/api/runs/r-old/events?kind=ToolReturned").json()
    assert event["v"] == 2
    assert event["data"]["error"] == {"type": "ToolExit", "message": "runner exited 137"}
    page = as_owner.get("/runs/r-old/?tab=timeline&kind=ToolReturned").content.decode()
    assert "run_tests failed: ToolExit: runner exited 137" in page
    assert "Error: ToolExit" not in page
    assert StoredEvent.objects.get(kind="ToolReturned").v == 1  # read upcast, stored as it was
