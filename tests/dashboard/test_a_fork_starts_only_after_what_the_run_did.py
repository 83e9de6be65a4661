"""A fork starts after an event of what the run did: an event of the run that no fork copies
(a person's tag, a stop) is named as what it is by the page and the API, and the timeline
offers no fork link where no fork can start."""

from __future__ import annotations

import html
import re

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoredEvent
from services import tags
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db

SAYS = "is not part of what the run did"


def tagged_run() -> tuple[str, int]:
    """A finished run, then tagged: its RunTagged sits on its control stream, after the rest."""
    run_id = run_of("first-flight")
    tags.tag(run_id, ["nightly"], [], "owner")
    [tagged] = [r for r in DjangoJournal().read(f"control-{run_id}") if r.event.kind == "RunTagged"]
    return run_id, tagged.position


def written() -> tuple[int, int]:
    return StoredEvent.objects.count(), RunSummary.objects.count()


def test_forking_at_a_tag_from_the_page_says_what_the_event_is_and_writes_nothing(as_owner):
    run_id, at = tagged_run()
    before = written()
    response = as_owner.post(f"/runs/{run_id}/fork", {"at": at})
    page = response.content.decode()
    assert response.status_code == 400
    # It is an event of the run: saying it was not, "its events are at positions 1 to N" with
    # N past it, contradicted itself.
    assert SAYS in page and "RunTagged" in page
    assert "is not an event of run" not in page
    assert written() == before


def test_forking_at_a_tag_from_the_api_says_what_the_event_is(as_owner):
    run_id, at = tagged_run()
    before = written()
    response = as_owner.post(
        f"/api/runs/{run_id}/fork", {"at": at}, content_type="application/json"
    )
    assert response.status_code == 400
    assert SAYS in response.json()["detail"] and "RunTagged" in response.json()["detail"]
    assert written() == before


def test_the_fork_page_of_a_tag_or_the_verdict_says_why_before_anything_is_typed(as_owner):
    run_id, at = tagged_run()
    verdict = next(
        r.position for r in DjangoJournal().read(f"run-{run_id}") if r.event.kind == "TeamFinished"
    )
    for position, says in ((at, SAYS), (verdict, "is the run's verdict")):
        for response in (
            as_owner.get(f"/runs/{run_id}/fork?at={position}"),
            as_owner.post(f"/runs/{run_id}/fork", {"at": position, "max_turns": "3"}),
        ):
            page = html.unescape(response.content.decode())
            assert response.status_code == 400
            assert says in page
            assert "Fork and run" not in page  # no form that every fork would be refused by


def test_the_timeline_offers_a_fork_only_where_one_can_start(as_owner):
    run_id, at = tagged_run()
    rows = DjangoJournal().select("WHERE run_id = %s ORDER BY position", [run_id])
    verdict = next(r.position for r in rows if r.event.kind == "TeamFinished")
    tool = next(r.position for r in rows if r.event.kind == "ToolReturned")

    def shown(after: int) -> tuple[set[int], set[int]]:
        """The positions of the rows of a page of the timeline, and those with a fork link."""
        page = as_owner.get(f"/runs/{run_id}/tabs/timeline?after={after}", HTTP_HX_REQUEST="true")
        html = page.content.decode()
        return set(map(int, re.findall(r'id="e(\d+)"', html))), set(
            map(int, re.findall(r"/fork\?at=(\d+)", html))
        )

    rows_shown, links = shown(tool - 1)
    assert tool in rows_shown and tool in links
    rows_shown, links = shown(verdict - 1)
    assert {verdict, at} <= rows_shown  # the rows are there, with no fork link
    assert at not in links and verdict not in links


@pytest.mark.parametrize(
    "at, said",
    [
        ("-5", "at: '-5' is not a position (a whole number, 0 or more)"),
        ("99999999999999999999999", "is at position '99999999999999999999999'"),
    ],
)
def test_a_position_no_event_has_is_named_as_it_was_typed(as_owner, at, said):
    run_id = run_of("first-flight")
    response = as_owner.get(f"/runs/{run_id}/fork?at={at}")
    page = html.unescape(response.content.decode())
    assert response.status_code == 400
    assert said in page
