"""Search from the pages and the API: which runs mention some words, the events that do with
links to them, refusals that say what was wrong, and agent text shown inert."""

from __future__ import annotations

import pytest
from django.test import Client

from journal_store.models import StoredEvent
from services import runs
from tests.dashboard.conftest import drive
from tests.dashboard.test_escaping import Elements, hostile_run

pytestmark = pytest.mark.django_db


def test_the_api_finds_the_run_and_event_that_mention_a_scan(as_owner):
    hostile = hostile_run()  # an imported run: indexed like any other
    body = as_owner.get("/api/search?q=alert").json()
    assert [r["run_id"] for r in body["runs"]] == [hostile]
    assert {h["kind"] for h in body["hits"]} >= {"TeamStarted", "MessageSent", "ModelResponded"}
    within = as_owner.get(f"/api/search?q=alert&run={hostile}&limit=2").json()
    assert len(within["hits"]) == 2 and within["runs"] == []


def test_the_page_links_each_hit_to_its_event_and_renders_it_inert(as_owner):
    hostile = hostile_run()
    page = as_owner.get("/search?q=alert").content.decode()
    assert f'href="/runs/{hostile}/?tab=timeline' in page
    parsed = Elements()
    parsed.feed(page)
    for tag, attrs in parsed.elements:
        assert tag != "script" or (attrs.get("src") or "").startswith("/static/")
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
    # The snippet as text, its match marked (where it was in brackets, which a text's own
    # brackets could not be told from).
    assert "&lt;script&gt;<mark>alert</mark>" in page
    assert parsed.unguarded == []


def test_bad_searches_say_what_was_wrong_and_write_nothing(as_owner):
    hostile_run()
    before = StoredEvent.objects.count()
    # Every value refused is a 422 in one shape, whether the schema or the search refuses it.
    api = as_owner.get('/api/search?q=" * ()')
    [problem] = api.json()["detail"]
    assert api.status_code == 422 and problem["loc"] == ["query", "q"]
    assert problem["msg"].startswith("type a word")
    assert as_owner.get("/api/search?q=" + "x" * 201).status_code == 422
    assert as_owner.get("/api/search?q=alert&limit=500").status_code == 422
    assert as_owner.get("/api/search?q=alert&run=r-nope").status_code == 404
    page = as_owner.get("/search?q=" + "w " * 13)
    assert page.status_code == 400 and "at most 12 words" in page.content.decode()
    missing = as_owner.get("/search?q=alert&run=r-nope")
    assert missing.status_code == 404 and "There is no run r-nope" in missing.content.decode()
    assert StoredEvent.objects.count() == before


def test_nobody_signed_out_searches():
    assert Client().get("/api/search?q=alert").status_code == 401
    assert Client().get("/search?q=alert").status_code == 302


def test_words_a_desk_run_shares_outside_its_own_journal_find_that_run(as_owner):
    """A desk run also writes to shared streams of no run: the order's facts and the
    customer's intent (run id ''). Their words ("refund") were indexed as a hit of no run,
    whose link the page could not draw: every search for them was a 500."""
    run_id = runs.start_run("support-desk", "double-refund", by="owner")
    drive(run_id)
    page = as_owner.get("/search?q=refund")
    assert page.status_code == 200
    api = as_owner.get("/api/search?q=refund").json()
    assert {h["run_id"] for h in api["hits"]} == {run_id}
    assert [r["run_id"] for r in api["runs"]] == [run_id]


def test_a_percent_or_an_underscore_is_refused_as_a_star_is(as_owner):
    for typed in ("%25", "_", "*"):
        page = as_owner.get(f"/search?q={typed}")
        assert page.status_code == 400 and "type a word" in page.content.decode(), typed
        [problem] = as_owner.get(f"/api/search?q={typed}").json()["detail"]
        assert problem["msg"].startswith("type a word"), typed


def test_a_snippet_marks_its_matches_and_keeps_the_texts_own_brackets():
    from dashboard.templatetags.minutes import marked

    assert marked("a [b] \x02c\x03 <d>") == "a [b] <mark>c</mark> &lt;d&gt;"
    # Markers out of turn (held by the text itself) open nothing and close nothing twice.
    assert marked("\x03x \x02y\x02 z") == "x <mark>y z</mark>"
    assert marked("\x02open") == "<mark>open</mark>"


def test_the_api_keeps_its_brackets(as_owner):
    hostile_run()
    hits = as_owner.get("/api/search?q=alert").json()["hits"]
    assert hits and all("[alert]" in h["snippet"] for h in hits)
    assert not any("\x02" in h["snippet"] or "\x03" in h["snippet"] for h in hits)


def test_a_text_holding_the_markers_is_highlighted_where_it_matched_only(as_owner):
    """A tool's output holding STX and ETX (the snippet's markers) was highlighted where it
    held them: "alpha \\x02beta \\x02gamma\\x03 delta" marked "beta gamma", and the API gave
    "[beta [gamma] delta ]"."""
    from tests.journal_store.test_search import a_run

    a_run("default", "r-0000000000aa", "alpha \x02beta \x02gamma\x03 delta \x03 epsilon")
    page = as_owner.get("/search?q=gamma").content.decode()
    assert "alpha beta <mark>gamma</mark> delta  epsilon" in page
    assert page.count("<mark>") == 1
    [hit] = as_owner.get("/api/search?q=gamma").json()["hits"]
    assert hit["snippet"].endswith("alpha beta [gamma] delta  epsilon")


@pytest.mark.parametrize("run", ["r%00x", "r%20x", "..", "r/x"])
def test_a_run_that_is_no_run_id_is_refused_naming_it_before_the_database_reads_it(as_owner, run):
    """A NUL in `run` reached the database (PostgreSQL's DataError: a 500 from the API and
    the page; SQLite a 404): the address's NUL check leaves the search to refuse it."""
    hostile_run()
    api = as_owner.get(f"/api/search?q=alert&run={run}")
    [problem] = api.json()["detail"]
    assert api.status_code == 422 and problem["loc"] == ["query", "run"]
    assert "is not a run id (1 to 64 letters" in problem["msg"]
    page = as_owner.get(f"/search?q=alert&run={run}")
    assert page.status_code == 400 and "is not a run id" in page.content.decode()


@pytest.mark.parametrize("query", ["alert%00b", "a%01lert", "alert%7F", "al%09ert"])
def test_a_control_character_in_the_words_is_refused_as_a_queues_search_refuses_it(as_owner, query):
    """It was read as a word break, and the API's answer echoed it as the query searched."""
    hostile_run()
    api = as_owner.get(f"/api/search?q={query}")
    [problem] = api.json()["detail"]
    assert api.status_code == 422 and problem["loc"] == ["query", "q"]
    assert problem["msg"] == "the search holds a control character"
    page = as_owner.get(f"/search?q={query}")
    assert page.status_code == 400 and "holds a control character" in page.content.decode()


def test_a_blank_run_is_every_run_as_on_the_page(as_owner):
    """The API answered `404 "no run "`, where the page reads a blank run as not asked."""
    hostile = hostile_run()
    every = as_owner.get("/api/search?q=alert").json()
    for blank in ("", "%20%20"):
        assert as_owner.get(f"/api/search?q=alert&run={blank}").json() == every
        page = as_owner.get(f"/search?q=alert&run={blank}")
        assert page.status_code == 200 and f'href="/runs/{hostile}/' in page.content.decode()


def test_a_run_a_store_already_holds_as_compare_is_still_named_by_it(as_owner):
    """`compare` is refused for a new run (import, --run-id) only: a run stored under it
    before it was reserved is still searched, listed as a parent and filtered by, where the
    reservation made every filter naming it a 422."""
    from journal_store import projection
    from journal_store.journal import DjangoJournal
    from runtime.events import TeamStarted

    started = TeamStarted(run_id="compare", team="solo", scenario="", task="alert the desk")
    DjangoJournal().append("run-compare", [started], 0)
    projection.catch_up()
    found = as_owner.get("/api/search?q=alert&run=compare")
    assert found.status_code == 200 and found.json()["hits"], found.content
    assert as_owner.get("/search?q=alert&run=compare").status_code == 200
    assert as_owner.get("/api/runs?parent=compare").status_code == 200
    assert as_owner.get("/review/conflicts?run=compare").status_code == 200


def test_a_run_with_more_matching_events_than_a_page_shows_says_so(as_owner):
    """The runs table said a run held 60 matching events; its link showed 50 cards and
    nothing said there were more (nor did the API)."""
    from journal_store import projection
    from journal_store.journal import DjangoJournal
    from runtime.events import MessageSent, TeamStarted

    r = {"run_id": "r-talkative"}
    said = [
        MessageSent(**r, performative="inform", sender="a", recipient="b", payload={"n": "zebra"})
        for _ in range(60)
    ]
    started = TeamStarted(**r, team="solo", scenario="", task="t")
    DjangoJournal().append("run-r-talkative", [started, *said], 0)
    projection.catch_up()
    listed = as_owner.get("/api/search?q=zebra").json()
    assert listed["runs"][0]["events"] == 60 and len(listed["hits"]) == 50
    assert listed["more"] is True
    page = as_owner.get("/search?q=zebra&run=r-talkative").content.decode()
    assert page.count('<div class="card">') == 50
    assert "The newest 50 events that hold every word are shown; more do." in page
    every = as_owner.get("/api/search?q=zebra&limit=60").json()
    assert len(every["hits"]) == 60 and every["more"] is False
    few = as_owner.get("/search?q=zebra&run=r-talkative&limit=60").content.decode()
    assert "more do" in few  # the page shows 50, whatever the address asks


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("alert%E2%80%AE", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ("%E2%81%A7alert%E2%81%A9", "U+2067 (RIGHT-TO-LEFT ISOLATE)"),
        ("alert%E2%80%8F", "U+200F (RIGHT-TO-LEFT MARK)"),
        ("al%E2%80%8Bert", "U+200B (ZERO WIDTH SPACE)"),
        ("al%C2%85ert", "a control character"),  # C1: NEXT LINE, a control as NUL is
    ],
)
def test_a_bidi_control_or_an_unseen_format_character_is_refused_naming_it(as_owner, query, named):
    """It was searched for as a word break, and the API's `query` and the page's heading
    echoed it back: "alert\u202e" shown as the query reads otherwise than it is written."""
    hostile_run()
    api = as_owner.get(f"/api/search?q={query}")
    [problem] = api.json()["detail"]
    assert api.status_code == 422 and problem["loc"] == ["query", "q"]
    assert named in problem["msg"]
    page = as_owner.get(f"/search?q={query}")
    assert page.status_code == 400 and named in page.content.decode()


def test_a_joiner_between_letters_is_still_searched_for(as_owner):
    """Persian writes U+200C (ZERO WIDTH NON-JOINER) inside words, and an emoji's sequence
    U+200D: they shape what is shown rather than reorder or hide it, and the indexes split
    words at them as the text's own were split."""
    hostile_run()
    assert as_owner.get("/api/search?q=al%E2%80%8Cert").status_code == 200
    assert as_owner.get("/search?q=al%E2%80%8Dert").status_code == 200
