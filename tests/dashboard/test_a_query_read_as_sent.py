"""A query's parameters are read as they were sent, or refused naming each, on every page and
API path (dashboard/query_string.py): a parameter given twice was read as its last value, the
other dropped unseen (`?after=1&after=2` listed from 2), and escapes of bytes that are no UTF-8
as U+FFFD (`?team=%FF` listed the runs of a team named "�": none)."""

from __future__ import annotations

import html

import pytest

from dashboard.query_string import problems
from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from runtime.events import AgentFinished, TeamStarted

pytestmark = pytest.mark.django_db

RUN = "r-0123456789ab"
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def listed(db) -> str:
    started = TeamStarted(run_id=RUN, team="solo", scenario="solo-fix", task="a task to list")
    DjangoJournal().append(f"run-{RUN}", [started, AgentFinished(run_id=RUN, agent="coder")], 0)
    projection.catch_up()
    return RUN


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/?page=1&page=2", "page"),
        ("/?status=done&q=x&status=running", "status"),
        ("/review/conflicts?status=open&status=all", "status"),
        ("/review/dead-letters?run=a&run=b", "run"),
        ("/metrics?team=solo&team=repo-fix", "team"),
        ("/search?q=a&q=b", "q"),
        (f"/runs/{RUN}/?tab=timeline&tab=audit", "tab"),
        (f"/runs/{RUN}/tabs/timeline?after=1&after=2", "after"),
        (f"/runs/{RUN}/tabs/timeline?agent=coder&agent=coder", "agent"),
        (f"/runs/{RUN}/tabs/trace?call=1&call=2", "call"),
        (f"/runs/{RUN}/tail?after=0&after=1", "after"),
        (f"/runs/{RUN}/fork?at=1&at=2", "at"),
    ],
)
def test_a_page_names_a_parameter_given_twice(as_reviewer, listed, url, field):
    before = StoredEvent.objects.count()
    answer = as_reviewer.get(url, **HX)
    assert answer.status_code == 400, url
    text = html.unescape(answer.content.decode())
    assert f"{field}: given 2 times (" in text and "this address takes one" in text
    assert StoredEvent.objects.count() == before


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/runs?team=solo&team=desk", "team"),
        ("/api/runs?limit=1&limit=2", "limit"),
        (f"/api/runs/{RUN}/events?after=0&after=1", "after"),
        (f"/api/runs/{RUN}/events?kind=TeamStarted&kind=AgentFinished", "kind"),
        (f"/api/runs/{RUN}/audit?limit=5&limit=6", "limit"),
        ("/api/review/dead-letters?status=open&status=all", "status"),
        ("/api/search?q=a&q=b", "q"),
        ("/api/metrics?since=2026-01-01&since=2026-02-01", "since"),
    ],
)
def test_the_api_names_a_parameter_given_twice(api, listed, url, field):
    answer = api.get(url)
    assert answer.status_code == 422, url
    [error] = answer.json()["detail"]
    assert error["loc"] == ["query", field]
    assert error["msg"].startswith("given 2 times (") and error["msg"].endswith("takes one")


def test_the_values_are_said_and_many_are_cut():
    said = problems(b"after=1&after=" + b"9" * 50 + b"&after=3&after=4")
    assert said == {"after": f"given 4 times ('1', '{'9' * 40}…', '3', …); this address takes one"}


def test_what_takes_several_values_of_one_parameter_still_does(as_reviewer, listed):
    """A run's timeline its kinds; the comparison the runs ticked in the list."""
    page = as_reviewer.get(f"/runs/{RUN}/?tab=timeline&kind=TeamStarted&kind=AgentFinished")
    assert page.status_code == 200
    assert page.content.decode().count('class="event') == 2
    tab = as_reviewer.get(f"/runs/{RUN}/tabs/timeline?kind=TeamStarted&kind=AgentFinished", **HX)
    assert tab.status_code == 200
    tail = as_reviewer.get(f"/runs/{RUN}/tail?after=0&kind=TeamStarted&kind=AgentFinished", **HX)
    assert tail.status_code in (200, 286)
    compare = as_reviewer.get(f"/runs/compare?run={RUN}&run={RUN}")
    assert "given 2 times" not in compare.content.decode()


@pytest.mark.parametrize(
    ("query", "field", "value"),
    [
        ("team=%FF", "team", "'%FF'"),
        ("q=%C3%28", "q", "'%C3%28'"),  # a lead byte and no continuation
        ("since=2026-01-01&tag=%E2%82", "tag", "'%E2%82'"),  # cut short
    ],
)
def test_escapes_of_bytes_that_are_no_text_are_named(as_reviewer, api, listed, query, field, value):
    page = as_reviewer.get(f"/?{query}")
    assert page.status_code == 400
    why = f"{value} is not UTF-8 text (its percent-escapes spell bytes that are no characters)"
    assert f"{field}: {why}" in html.unescape(page.content.decode())
    answer = api.get(f"/api/runs?{query}")
    assert answer.status_code == 422
    assert answer.json()["detail"] == [{"type": "value_error", "loc": ["query", field], "msg": why}]


def test_a_raw_byte_that_is_no_text_is_named(as_reviewer, listed):
    """Sent unescaped (WSGI hands the query over as latin-1 text): Django read it as U+FFFD."""
    page = as_reviewer.get("/", QUERY_STRING="team=\xff")
    assert page.status_code == 400
    assert "team: '\\\\xff' is not UTF-8 text" in html.unescape(page.content.decode())


def test_text_escaped_as_utf_8_is_read_as_before(as_reviewer, api, listed):
    assert as_reviewer.get("/?q=caf%C3%A9+a").status_code == 200
    assert as_reviewer.get("/?q=café").status_code == 200  # escaped by the client
    assert api.get("/api/search?q=caf%C3%A9").status_code == 200
    assert as_reviewer.get("/?q=&team=&page=").status_code == 200  # blanks, once each


def test_a_page_refused_for_its_query_is_a_page_with_the_way_back(as_reviewer, listed):
    """Opened by hand (no htmx): a page that says what to mend and links the address without
    its query, where it was a line of bare text; htmx gets the sentence where its answer goes."""
    page = as_reviewer.get(f"/runs/{RUN}/?tab=timeline&tab=audit")
    assert page.status_code == 400 and page["Content-Type"].startswith("text/html")
    text = html.unescape(page.content.decode())
    assert "<h1>The address cannot be read</h1>" in text
    assert "<li>tab: given 2 times ('timeline', 'audit'); this address takes one</li>" in text
    assert f'<a href="/runs/{RUN}/">/runs/{RUN}/</a> without its query' in text
    swapped = as_reviewer.get(f"/runs/{RUN}/tabs/timeline?after=1&after=2", **HX)
    assert swapped.status_code == 400
    assert swapped.content.decode().startswith('<p class="message error" role="status">after:')


def test_an_address_that_is_no_page_is_its_404_whatever_its_query(as_reviewer):
    answer = as_reviewer.get("/compare?run=a&run=b")
    assert answer.status_code == 404
