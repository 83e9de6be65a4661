"""A run waiting for a person keeps its header and list row looking again (every 5 s), so a
decision taken elsewhere shows without a reload; once decided, they stop asking (286)."""

from __future__ import annotations

import pytest

from journal_store import projection
from journal_store.models import Conflict
from services import review, runs
from tests.dashboard.conftest import drive

pytestmark = pytest.mark.django_db(transaction=True)
STOP_POLLING = 286


def test_a_waiting_runs_header_and_row_poll_until_the_conflict_is_decided(as_reviewer):
    run_id = runs.start_run("support-desk", "lost-update", by="owner", desk={"order_id": "W-1"})
    assert drive(run_id) == "escalated"
    projection.catch_up()

    page = as_reviewer.get(f"/runs/{run_id}/").content.decode()
    assert f'hx-get="/runs/{run_id}/header" hx-trigger="every 5s"' in page
    listed = as_reviewer.get("/").content.decode()
    assert f'hx-get="/runs/{run_id}/row" hx-trigger="every 5s"' in listed
    header = as_reviewer.get(f"/runs/{run_id}/header")
    row = as_reviewer.get(f"/runs/{run_id}/row")
    assert (header.status_code, row.status_code) == (200, 200)
    assert "waiting for a person" in header.content.decode()

    conflict = Conflict.objects.get(run_id=run_id)
    review.resolve(conflict.conflict_id, review.NONE, "rosa", "neither: ask the customer")
    header = as_reviewer.get(f"/runs/{run_id}/header")
    row = as_reviewer.get(f"/runs/{run_id}/row")
    assert (header.status_code, row.status_code) == (STOP_POLLING, STOP_POLLING)
    assert "resolved by a person" in header.content.decode()
    assert "resolved by a person" in row.content.decode()
    assert "hx-trigger" not in row.content.decode()
