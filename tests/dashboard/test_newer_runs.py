"""The runs list says when runs its filter selects have started since it was drawn: from the
API, a command, another tab. Such a run was not in the list until somebody loaded it again."""

from __future__ import annotations

import re
from html import unescape

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime.events import TeamStarted
from tests.dashboard import polls
from tests.dashboard.polls import link_of, quiet, said

pytestmark = pytest.mark.django_db


def started(run_id: str, team: str = "solo") -> None:
    event = TeamStarted(run_id=run_id, team=team, scenario="", task=f"task of {run_id}")
    DjangoJournal().append(f"run-{run_id}", [event], 0)
    projection.catch_up()


def poll_of(page: str) -> str:
    return polls.poll_of(page, "newer-runs")


def test_the_poll_says_nothing_until_a_run_starts_then_counts_it(as_owner):
    started("r-00000000000a")
    poll = poll_of(as_owner.get("/").content.decode())
    assert "newer_than=" in poll
    assert quiet(as_owner.get(poll))
    started("r-00000000000b")
    answer = said(as_owner.get(poll))
    assert "1 run started since this list was drawn: show it" in answer
    assert "<title>(1) Runs · Minutes</title>" in answer  # htmx takes it: a background tab says so
    # The poll goes on from what the list now says: quiet until the count moves again.
    poll = polls.poll_of(answer.replace("<span hidden", '<span id="again"'), "again")
    assert "shown=1" in poll
    assert quiet(as_owner.get(poll))
    started("r-00000000000c")
    answer = said(as_owner.get(poll))
    assert "2 runs started since this list was drawn: show them" in answer
    # The link draws the list again, under the same filter, with both runs in it.
    link = link_of(answer)
    assert "newer_than" not in link
    page = as_owner.get(link).content.decode()
    assert "r-00000000000b" in page and "r-00000000000c" in page
    assert quiet(as_owner.get(poll_of(page)))


def test_the_poll_counts_only_what_the_filter_selects(as_owner):
    started("r-00000000000a", team="solo")
    poll = poll_of(as_owner.get("/?team=solo&page=1").content.decode())
    assert "team=solo" in poll and "page=" not in poll
    started("r-00000000000b", team="repo-fix")
    assert quiet(as_owner.get(poll))
    started("r-00000000000c", team="solo")
    answer = said(as_owner.get(poll))
    assert "1 run started" in answer
    link = link_of(answer)
    assert "team=solo" in link and "newer_than" not in link and "shown" not in link


def test_an_empty_list_counts_every_run_that_starts(as_owner):
    poll = poll_of(as_owner.get("/").content.decode())
    assert "newer_than" not in poll
    assert quiet(as_owner.get(poll))
    started("r-00000000000a")
    assert "1 run started" in said(as_owner.get(poll))


def test_a_run_started_in_the_same_instant_as_the_newest_shown_is_not_counted(as_owner):
    started("r-00000000000a")
    poll = poll_of(as_owner.get("/").content.decode())
    newest = RunSummary.objects.get(run_id="r-00000000000a").started_at
    started("r-00000000000b")
    RunSummary.objects.filter(run_id="r-00000000000b").update(started_at=newest)
    # Strictly after: the one the list showed is not counted again as new.
    assert quiet(as_owner.get(poll))


@pytest.mark.parametrize(
    "mark",
    ["yesterday", "2026-12-04T16:37:55", "9" * 5000, "2026-12-04T16:37:55+00:00" + "0" * 30],
)
def test_a_mark_that_is_no_time_with_its_offset_is_refused_naming_it(as_owner, mark):
    refused = as_owner.get("/runs/newer", {"newer_than": mark})
    assert refused.status_code == 400
    why = refused.content.decode()
    assert "newer_than" in why and "is not a time with its offset" in why
    assert len(why) < 2000  # the value is cut short, not repeated whole


@pytest.mark.parametrize("mark", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59.999999-12:00"])
def test_a_mark_that_utc_puts_outside_the_calendar_is_refused_naming_it(as_owner, mark):
    # In UTC the first is in year 0 and the second in year 10000: converting it for the
    # database raised OverflowError, a 500.
    refused = as_owner.get("/runs/newer", {"newer_than": mark})
    assert refused.status_code == 400
    why = unescape(refused.content.decode())
    assert "newer_than" in why
    assert f"'{mark}' is a time outside the years 1 to 9999" in why


def test_a_filter_the_list_cannot_take_is_refused_by_its_poll_too(as_owner):
    refused = as_owner.get("/runs/newer", {"status": "nonsense", "newer_than": "x"})
    assert refused.status_code == 400
    why = unescape(refused.content.decode())
    assert "'nonsense' is no status" in why
    assert "'x' is not a time with its offset" in why  # every field it cannot take, at once


def test_the_poll_wants_a_signed_in_person(client):
    asked = client.get("/runs/newer")
    assert asked.status_code == 302 and "/login" in asked["Location"]


@pytest.mark.parametrize("order", ["sort=oldest", "sort=tokens", "next page"])
def test_a_list_in_another_order_counts_from_the_newest_start_it_selects(
    as_owner, monkeypatch, order
):
    from dashboard.views import run_list

    monkeypatch.setattr(run_list, "PAGE", 1)  # two pages of one run each
    started("r-00000000000a")
    started("r-00000000000b")
    page = as_owner.get("/" if order == "next page" else f"/?{order}").content.decode()
    if order == "next page":  # the second page, as its Next link asks for it
        after = re.search(r'href="\?&amp;after=([\w-]+)"', page)
        assert after, "the first page has no Next link"
        page = as_owner.get(f"/?after={after.group(1)}").content.decode()
        assert "r-00000000000a" in page and "r-00000000000b" not in page
    poll = poll_of(page)
    # Oldest first, the first row is the oldest run, and the second page's is too: counted
    # from either, the newer run already listed would be announced as new.
    assert quiet(as_owner.get(poll))
    started("r-00000000000c")
    assert "1 run started" in said(as_owner.get(poll))


def test_a_run_that_leaves_the_filter_takes_the_sentence_away(as_owner):
    """A list of the running runs: a new one is announced, and once it has finished it is no
    longer one the list would show, so the sentence goes (a poll that still goes on)."""
    started("r-00000000000a")
    poll = poll_of(as_owner.get("/?status=running").content.decode())
    started("r-00000000000b")
    answer = said(as_owner.get(poll))
    poll = polls.poll_of(answer.replace("<span hidden", '<span id="again"'), "again")
    RunSummary.objects.filter(run_id="r-00000000000b").update(status="done")
    answer = said(as_owner.get(poll))
    assert "started since" not in answer and "shown=0" in unescape(answer)


def test_a_shown_count_that_is_none_is_refused(as_owner):
    refused = as_owner.get("/runs/newer", {"shown": "-2"})
    assert refused.status_code == 400
    assert "'-2' is not a position" in unescape(refused.content.decode())


def test_the_list_drawn_again_by_htmx_gives_the_title_back_and_a_whole_page_has_one(as_owner):
    started("r-00000000000a")
    part = as_owner.get("/", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="runs").content.decode()
    assert "<title>Runs · Minutes</title>" in part
    page = as_owner.get("/").content.decode()
    assert page.count("<title>") == 1
