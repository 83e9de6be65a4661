"""A run whose first event the runs' fold cannot take had no summary (journal_store/stopped.py
set it aside before one was made): its page and the API's detail answered 404, and nothing
said why, and the runs list never had it. Now they say its views stopped at its first event,
with the error, and its timeline shows its journal; its summary says what is known (status
unknown), so the list has it."""

from __future__ import annotations

import pytest
from django.test import Client

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoredEvent
from runtime import events as ev
from tests.journal_store.test_a_run_whose_event_raises_stops_alone import said

pytestmark = pytest.mark.django_db


def unfolded_run() -> int:
    """Run c, its TeamStarted rewritten in the table (its team a mapping): its position."""
    started = ev.TeamStarted(run_id="c", team="solo", scenario="solo-fix", task="t")
    DjangoJournal().append("run-c", [started, said("c", "hello")], 0)
    row = StoredEvent.objects.get(run_id="c", kind="TeamStarted")
    row.data = row.data.replace('"team":"solo"', '"team":{"<i>y</i>":1}')
    assert '"team":{' in row.data
    row.save()
    return row.position


def test_its_page_says_why_and_shows_its_journal(as_owner):
    first = unfolded_run()
    response = as_owner.get("/runs/c/")
    assert response.status_code == 200
    # The page caught up: a summary of what is known, for the runs list (status unknown).
    assert RunSummary.objects.get(run_id="c").status == "unknown"
    page = response.content.decode()
    assert "This run's views stopped at its first event" in page
    assert f'#e{first}"' in page and "(TeamStarted)" in page
    assert "EventFormatError: the event at position" in page
    assert "&lt;i&gt;y&lt;/i&gt;" in page and "<i>y</i>" not in page
    # The timeline: the first row said unreadable, the message after it shown.
    assert f"The event at position {first} (kind" in page and "hello" in page
    for tab in ("trace", "threads", "bill", "audit", "findings", "metrics"):
        assert as_owner.get(f"/runs/c/?tab={tab}").status_code == 200, tab
    assert as_owner.get("/runs/nothing-here/").status_code == 404


def test_the_api_detail_says_it(token):
    first = unfolded_run()
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    response = api.get("/api/runs/c")
    assert response.status_code == 200
    found = response.json()
    assert found["run_id"] == "c" and found["status"] == "unknown"
    (stop,) = found["views_stopped"]
    assert (stop["view"], stop["position"], stop["kind"]) == ("runs", first, "TeamStarted")
    assert stop["error"].startswith(f"EventFormatError: the event at position {first}")
    events = api.get("/api/runs/c/events").json()
    assert [e["kind"] for e in events] == ["TeamStarted", "MessageSent"]
    assert events[0]["unreadable"] and not events[1]["unreadable"]
    assert api.get("/api/runs/nothing-here").status_code == 404


def test_it_is_listed_and_filtered_as_others(as_owner, token):
    """It had a page but no row in the runs list (the list reads the summaries), so nobody
    found it: it is listed with what is known (its id, its start, that its views stopped) and
    chosen by the filters as any run is, page and API."""
    unfolded_run()
    other = ev.TeamStarted(run_id="d", team="solo", scenario="solo-fix", task="t")
    DjangoJournal().append("run-d", [other], 0)
    page = as_owner.get("/").content.decode()
    assert 'id="row-c"' in page and 'id="row-d"' in page
    row = page[page.index('id="row-c"') :]
    row = row[: row.index("</tr>")]
    assert "views stopped" in row and "unknown" in row
    today = str(RunSummary.objects.get(run_id="d").started_at.date())
    for asked in (
        "q=c",
        "status=unknown",
        "team=(none)",
        f"since={today}&until={today}",
        "sort=oldest",
        "sort=duration",
    ):
        assert 'id="row-c"' in as_owner.get(f"/?{asked}").content.decode(), asked
    assert 'id="row-c"' not in as_owner.get("/?status=running").content.decode()
    assert 'id="row-c"' not in as_owner.get("/?team=solo").content.decode()

    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    listed = api.get("/api/runs").json()["items"]
    assert {r["run_id"]: r["status"] for r in listed} == {"c": "unknown", "d": "running"}
    assert [r["run_id"] for r in api.get("/api/runs?status=unknown").json()["items"]] == ["c"]
    # Paged one at a time by the keyset, each is listed once.
    seen, after = [], ""
    for _ in range(3):
        found = api.get(f"/api/runs?limit=1&after={after}").json()
        seen += [r["run_id"] for r in found["items"]]
        if not found["next"]:
            break
        after = found["next"]
    assert sorted(seen) == ["c", "d"]
