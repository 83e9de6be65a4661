"""A run whose event a fold could not take (journal_store/stopped.py): its page and the API
say which views stopped at which event and why, escaped, and how to fold it again; the other
run's page is whole. (Its timeline tab reads the journal itself and says the row it cannot
read: tests/dashboard/test_an_unreadable_row_in_the_timeline.py.)"""

from __future__ import annotations

import pytest
from django.test import Client

from tests.journal_store.test_a_run_whose_event_raises_stops_alone import texts, two_runs

pytestmark = pytest.mark.django_db


def test_the_page_and_the_api_say_where_and_why(as_owner, token):
    bad = two_runs("default")
    page = as_owner.get("/runs/a/?tab=bill").content.decode()  # the page catches up
    assert texts("default", "b") == ["before", "after"]
    assert 'Some of this run\'s views stopped: <span class="mono">runs</span> at event' in page
    assert f'#e{bad}"' in page and "(ToolReturned)" in page
    assert "EventFormatError: the event at position" in page
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page
    assert "python manage.py rebuild_projections" in page
    other = as_owner.get("/runs/b/")
    assert other.status_code == 200 and "views stopped" not in other.content.decode()

    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    (stop,) = api.get("/api/runs/a").json()["views_stopped"]
    assert {k: stop[k] for k in ("view", "position", "kind")} == {
        "view": "runs",
        "position": bad,
        "kind": "ToolReturned",
    }
    assert stop["error"].startswith(f"EventFormatError: the event at position {bad}")
    assert api.get("/api/runs/b").json()["views_stopped"] == []
