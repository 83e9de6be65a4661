"""A run waiting for a person keeps its header and list row looking again (every 5 s), so a
decision taken elsewhere shows without a reload; once decided, they stop asking (286)."""

from __future__ import annotations

import re

import pytest

from journal_store import projection
from journal_store.models import Conflict
from services import review, runs
from tests.dashboard.conftest import drive

pytestmark = pytest.mark.django_db
STOP_POLLING = 286
HTMX = {"HX-Request": "true", "HX-Target": "tab"}


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


def test_an_interrupted_runs_header_and_row_poll_and_follow_its_resume(as_reviewer):
    """Resume on an interrupted run's page drew the page again at once, before a step took the
    resume up: it said "interrupted" until reloaded, the list's row too, though the run went
    on and finished. Both look again every 5 s while it is interrupted, and follow it."""
    from services.steps import drive_step
    from tests.dashboard.conftest import run_of

    run_id = run_of("first-flight", by="rosa", steps=1)
    runs.interrupt(run_id, "ann", "wrong repository")
    assert drive_step(run_id, "test") == "interrupted"
    projection.catch_up()
    page = as_reviewer.get(f"/runs/{run_id}/").content.decode()
    assert f'hx-get="/runs/{run_id}/header" hx-trigger="every 5s"' in page
    assert (
        f'hx-get="/runs/{run_id}/row" hx-trigger="every 5s"'
        in as_reviewer.get("/").content.decode()
    )
    assert as_reviewer.get(f"/runs/{run_id}/header").status_code == 200

    timeline = as_reviewer.get(f"/runs/{run_id}/tabs/timeline", headers=HTMX).content.decode()
    [last] = re.findall(r'hx-get="/runs/[^"]+/tail\?after=(\d+)&amp;live=1"', timeline)

    runs.resume(run_id, "ann", "right repository after all")
    header = as_reviewer.get(f"/runs/{run_id}/header")
    assert header.status_code == 200 and "interrupted" in header.content.decode()  # on its way
    assert drive(run_id) == "done"
    projection.catch_up()
    header = as_reviewer.get(f"/runs/{run_id}/header")
    row = as_reviewer.get(f"/runs/{run_id}/row")
    assert (header.status_code, row.status_code) == (STOP_POLLING, STOP_POLLING)
    assert '<span class="badge done">done</span>' in row.content.decode()
    assert "hx-trigger" not in row.content.decode()
    # and the timeline's tail, asked after the last row it showed, brings what came since
    tail = as_reviewer.get(f"/runs/{run_id}/tail?after={last}&live=1", headers=HTMX)
    assert tail.status_code in (200, 286) and "RunResumed" in tail.content.decode()


def test_a_runs_header_brings_the_navigations_counts_along(as_reviewer):
    """A dead-lettered run's page open in one tab, its letter discarded in another: the header
    it polls showed the discard while the navigation still said "Dead letters (open: 1)"."""
    from services import letters
    from tests.dashboard.conftest import run_of

    run_id = run_of("reject-loop")  # the reviewer keeps rejecting: the task goes to a person
    projection.catch_up()
    page = as_reviewer.get(f"/runs/{run_id}/").content.decode()
    assert 'id="waiting-letters"> <span class="count"><span class="skip">(open: </span>1<' in page
    letters.decide_letter(f"{run_id}:1", "discard", "reviewer", "not worth it")
    drive(run_id)
    projection.catch_up()
    header = as_reviewer.get(f"/runs/{run_id}/header").content.decode()
    assert "discarded by a person" in header
    assert '<span id="waiting-letters" hx-swap-oob="true"></span>' in header
    assert '<span id="waiting-conflicts" hx-swap-oob="true"></span>' in header
