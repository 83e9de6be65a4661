"""A row no event model reads (rewritten in the table) is said in the timeline's place for it:
its position, its kind and why, escaped, where the run's page (the timeline is its default
tab), its tail poll and the API's events answered a server error; the events around it are
shown as ever."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.journal_store.test_a_run_whose_event_raises_stops_alone import two_runs

pytestmark = pytest.mark.django_db


def said_unreadable(page: str, bad: int) -> None:
    assert f'id="e{bad}"' in page
    assert f"The event at position {bad} (kind" in page and "ToolReturned</span>) could" in page
    assert "could not be read: <span" in page and "tool" in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page


def test_the_page_and_its_tail_show_the_rest_and_say_the_row(as_owner):
    bad = two_runs("default")
    response = as_owner.get("/runs/a/")
    assert response.status_code == 200
    page = response.content.decode()
    said_unreadable(page, bad)
    assert page.count('class="event') == 4  # three readable events and the unreadable one
    assert f'id="e{bad + 2}"' in page  # a's "after", past the row

    tail = as_owner.get(f"/runs/a/tail?after={bad - 1}", HTTP_HX_REQUEST="true")
    assert tail.status_code == 286 or tail.status_code == 200
    said_unreadable(tail.content.decode(), bad)


def test_the_api_gives_the_row_as_unreadable(token):
    bad = two_runs("default")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    response = api.get("/api/runs/a/events")
    assert response.status_code == 200
    found = response.json()
    assert [e["kind"] for e in found] == [
        "TeamStarted",
        "MessageSent",
        "ToolReturned",
        "MessageSent",
    ]
    row = found[2]
    assert (row["position"], row["stream"], row["version"], row["data"]) == (bad, "run-a", 3, {})
    assert row["unreadable"].startswith("1 validation error") and "tool" in row["unreadable"]
    assert all(e["unreadable"] == "" for e in found if e["position"] != bad)
    assert found[3]["data"]["payload"] == {"text": "after"}


def test_the_trace_tab_leaves_the_row_out_and_says_so(as_owner):
    """The trace tab reads the journal too: the drawing is of the events it reads."""
    bad = two_runs("default")
    response = as_owner.get("/runs/a/?tab=trace")
    assert response.status_code == 200
    page = response.content.decode()
    assert f"Left out of the drawing: the event at position {bad} (kind" in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page
    assert "Left out" not in as_owner.get("/runs/b/?tab=trace").content.decode()
