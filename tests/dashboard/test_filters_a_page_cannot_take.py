"""A filter value a page cannot take is a 400 naming the field, the value and what the field
takes, with the page still usable: its form with what was typed, and no list drawn as if the
filter had applied. The pages took a bad date for no bound, an unknown status or sort for the
default, and listed runs nobody had asked for, where the API answered 422 naming the field."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import Checkpoint, StoredEvent
from runtime.events import TeamStarted

pytestmark = pytest.mark.django_db

RUN = "r-0123456789ab"
PART = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "runs"}


@pytest.fixture
def listed(db) -> str:
    started = TeamStarted(run_id=RUN, team="solo", scenario="solo-fix", task="a task to list")
    DjangoJournal().append(f"run-{RUN}", [started], 0)
    projection.catch_up()
    return RUN


def said(body: str) -> str:
    """The page's text as a person reads it: tags out, entities read."""
    return html.unescape(re.sub(r"<[^>]+>", "", body))


def written() -> tuple[int, list[object]]:
    return StoredEvent.objects.count(), list(Checkpoint.objects.values_list())


@pytest.mark.parametrize(
    ("query", "field", "message", "kept"),
    [
        (
            "since=yesterday",
            "since",
            "since: 'yesterday' is not a date (YYYY-MM-DD)",
            '<input type="text" id="since" name="since" value="yesterday" aria-invalid="true"',
        ),
        (
            "until=2026-02-30",
            "until",
            "until: '2026-02-30' is not a date (YYYY-MM-DD)",
            '<input type="text" id="until" name="until" value="2026-02-30" aria-invalid="true"',
        ),
        (
            "status=finished",
            "status",
            "status: 'finished' is no status; one of running, done,",
            '<option value="finished" selected>finished</option>',
        ),
        (
            "sort=newest",
            "sort",
            "sort: 'newest' is no sort; one of started, oldest, status, tokens,",
            '<option value="newest" selected>newest</option>',
        ),
        (
            "tag=" + "n" * 40,
            "tag",
            f"tag: '{'n' * 40}' is not a tag (up to 32 letters, digits,",
            f'<input id="tag" name="tag" value="{"n" * 40}"',
        ),
        (
            "tag=two+words",
            "tag",
            "tag: 'two words' is not a tag (up to 32 letters,",
            '<input id="tag" name="tag" value="two words"',
        ),
    ],
)
def test_the_runs_list_names_a_value_it_cannot_take(as_owner, listed, query, field, message, kept):
    before = written()
    answer = as_owner.get(f"/?{query}")
    body = answer.content.decode()
    assert answer.status_code == 400
    assert message in said(body)
    assert f'<li id="{field}-error"><strong>{field}</strong>: ' in body
    assert kept in body  # the form, with what was typed
    assert f'aria-describedby="{field}-error"' in body
    assert "No runs are listed: these filters cannot be used." in body
    assert listed not in body and "a task to list" not in body  # no list as if filtered
    assert '<nav aria-label="Main">' in body  # the page, whole
    assert written() == before

    # htmx asking for the list's part (the filters changed in place): the message is the part.
    part = as_owner.get(f"/?{query}", **PART)
    assert part.status_code == 400  # swapped all the same (templates/base.html)
    text = part.content.decode()
    assert message in said(text) and "<html" not in text and listed not in text
    assert 'role="alert"' in text
    assert written() == before


def test_the_good_filters_beside_a_bad_one_stay_as_typed(as_owner, listed):
    body = as_owner.get("/?status=done&q=+parser+&team=solo&since=soon&sort=tokens").content
    page = body.decode()
    assert '<option value="done" selected>' in page
    assert '<option value="solo" selected>' in page
    assert '<option value="tokens" selected>' in page
    assert 'name="q" value="parser"' in page
    assert 'value="soon"' in page and said(page).count("since: 'soon' is not a date") == 1
    # Each refused value is named once, all of them at once.
    both = said(as_owner.get("/?since=soon&sort=up").content.decode())
    assert "since: 'soon' is not a date" in both and "sort: 'up' is no sort" in both


def test_a_huge_value_is_not_repeated_whole(as_owner, listed):
    body = as_owner.get("/?since=" + "9" * 5000).content.decode()
    assert "9" * 200 in body and "9" * 201 not in body
    assert "since: '" + "9" * 40 + "…' is not a date" in said(body)


def test_a_hostile_value_comes_back_as_text(as_owner, listed):
    body = as_owner.get("/?sort=%3Cscript%3Ealert(1)%3C/script%3E").content.decode()
    assert "<script>alert(1)" not in body and "&lt;script&gt;alert(1)" in body


@pytest.mark.parametrize(
    "query",
    [
        "",
        "status=done",
        "status=running",
        "sort=oldest",
        "since=2000-01-01&until=2999-12-31",
        "tag=Nightly",
        "team=nope",
        "q=%20",
    ],
)
def test_values_it_takes_list_as_before(as_owner, listed, query):
    answer = as_owner.get(f"/?{query}")
    assert answer.status_code == 200
    assert "these filters cannot be used" not in answer.content.decode()
    assert as_owner.get(f"/?{query}", **PART).status_code == 200


def test_the_api_refuses_what_the_page_refuses_in_the_same_words(as_owner, listed, token):
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    for query, field in (("since=yesterday", "since"), ("tag=a+b", "tag"), ("sort=x", "sort")):
        answer = api.get(f"/api/runs?{query}")
        assert answer.status_code == 422
        [error] = answer.json()["detail"]
        assert error["loc"] == ["query", field]
        assert f"{field}: {error['msg']}" in said(as_owner.get(f"/?{query}").content.decode())
    assert api.get("/api/runs?tag=Nightly").status_code == 200
