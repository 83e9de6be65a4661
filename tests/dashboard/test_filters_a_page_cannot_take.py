"""A query value a page cannot take is a 400 naming the field, the value and what the field
takes, with the page still usable: its form with what was typed, and no list drawn as if the
filter had applied; nothing is written. The runs list took a bad date for no bound and an
unknown status or sort for the default, and listed runs nobody had asked for, where the API
answered 422 naming the field; the review queues took an unknown status for "open"; a run's
tabs took an `after` or a `call` that is no number (or a negative one) for the start (dashboard/asked.py)."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from dashboard import asked, listing
from journal_store import projection, queues
from journal_store.journal import DjangoJournal
from journal_store.models import Checkpoint, StoredEvent
from runtime.events import AgentFinished, ConflictParked, DeadLettered, TeamStarted

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
            "Started from: 'yesterday' is not a date (YYYY-MM-DD)",
            '<input type="text" id="since" name="since" value="yesterday" aria-invalid="true"',
        ),
        (
            "until=2026-02-30",
            "until",
            "to: '2026-02-30' is not a date (YYYY-MM-DD)",
            '<input type="text" id="until" name="until" value="2026-02-30" aria-invalid="true"',
        ),
        (
            # The metrics page refused it; the list said "No runs match. Start one."
            "since=2026-12-05&until=2026-12-01",
            "until",
            "to: 2026-12-01 is before Started from (2026-12-05)",
            '<input type="text" id="until" name="until" value="2026-12-01" aria-invalid="true"',
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
            "finding=budget",
            "finding",
            "finding: 'budget' is no finding; one of accepted_failing_tests, breaker_tripped,",
            '<option value="budget" selected>budget</option>',
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
    assert f'<li id="{field}-error"><strong>{listing.LABELS.get(field, field)}</strong>: ' in body
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
    assert 'value="soon"' in page and said(page).count("Started from: 'soon' is not a date") == 1
    # Each refused value is named once, all of them at once.
    both = said(as_owner.get("/?since=soon&sort=up").content.decode())
    assert "Started from: 'soon' is not a date" in both and "sort: 'up' is no sort" in both


def test_a_huge_value_is_not_repeated_whole(as_owner, listed):
    body = as_owner.get("/?since=" + "9" * 5000).content.decode()
    assert 'value="' + "9" * 64 + '"' in body and "9" * 65 not in body
    assert "Started from: '" + "9" * 40 + "…' is not a date" in said(body)


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
        # The page names the field as its form labels it; the API by its parameter's name.
        page = said(as_owner.get(f"/?{query}").content.decode())
        assert f"{listing.LABELS.get(field, field)}: {error['msg']}" in page
    assert api.get("/api/runs?tag=Nightly").status_code == 200


@pytest.mark.parametrize("path", ["/", "/review/dead-letters", "/review/conflicts"])
@pytest.mark.parametrize(
    ("page", "message"),
    [
        ("abc", "page: 'abc' is not a page (a whole number, 1 or more)"),
        ("0", "page: '0' is not a page"),
        ("-2", "page: '-2' is not a page"),
        ("1.5", "page: '1.5' is not a page"),
        ("%C2%B2", "page: '²' is not a page"),
    ],
)
def test_a_list_names_a_page_that_is_no_page(as_reviewer, queued, path, page, message):
    """Django's paginator showed the first page for one that is no number, as if it had not
    been asked."""
    before = written()
    answer = as_reviewer.get(f"{path}?page={page}")
    body = answer.content.decode()
    assert answer.status_code == 400
    assert message in said(body)
    assert '<li id="page-error"><strong>page</strong>: ' in body
    assert RUN not in body.replace(f"run={RUN}", "")  # no items, no runs listed
    assert written() == before


@pytest.mark.parametrize(
    ("path", "query", "filter_said"),
    [
        ("/", "status=finished", "status: 'finished' is no status"),
        ("/", "since=soon", "Started from: 'soon' is not a date"),
        ("/review/dead-letters", "status=closed", "status: 'closed' is no status of the "),
        ("/review/conflicts", "run=a/b", "run: 'a/b' is not a run id"),
    ],
)
def test_a_list_names_a_bad_page_beside_a_bad_filter(as_reviewer, queued, path, query, filter_said):
    """Both in one answer, where the page was named only once the filters had been mended."""
    answer = as_reviewer.get(f"{path}?{query}&page=abc")
    assert answer.status_code == 400
    text = said(answer.content.decode())
    assert filter_said in text
    assert "page: 'abc' is not a page (a whole number, 1 or more)" in text


LISTS = ["/", "/review/dead-letters", "/review/conflicts"]


@pytest.mark.parametrize("path", LISTS)
@pytest.mark.parametrize("page", ["", "1", "01"])
def test_a_list_shows_its_first_page_by_number(as_reviewer, queued, path, page):
    """An address kept from when the lists went to a page by number: the first page is the
    first page still."""
    answer = as_reviewer.get(f"{path}?page={page}")
    assert answer.status_code == 200, page
    item = {"/": RUN, **{f"/review/{k}": v for k, v in QUEUE_PAGES.items()}}[path]
    assert item in answer.content.decode()


@pytest.mark.parametrize(
    ("path", "gone"),
    [
        ("/", "page: the list no longer goes to a page by its number"),
        ("/review/dead-letters", "page: the queue no longer goes to a page by its number"),
        ("/review/conflicts", "page: the queue no longer goes to a page by its number"),
    ],
)
@pytest.mark.parametrize("page", ["2", "9" * 30])
def test_a_list_names_a_page_by_number_past_the_first(as_reviewer, queued, path, gone, page):
    """The lists go on by their links (dashboard/run_pages.py, dashboard/queue_pages.py): an
    address kept from when they went to a page by number is told so, where showing the first
    page would list items as if they were that page's (and a queue showed its last page for
    one past it)."""
    answer = as_reviewer.get(f"{path}?page={page}")
    assert answer.status_code == 400
    assert gone in said(answer.content.decode())
    assert RUN not in answer.content.decode().replace(f"run={RUN}", "")


QUEUED = [
    DeadLettered(run_id=RUN, letter_id=f"{RUN}:1", reason="no reply by turn 9", attempts=2),
    ConflictParked(
        run_id=RUN,
        conflict_id="c-queued-1",
        subject="order:1",
        predicate="status",
        conflict_type="state",
        claims=[{"claim_id": "a", "value": "paid"}, {"claim_id": "b", "value": "refunded"}],
    ),
]
QUEUE_PAGES = {"dead-letters": f"{RUN}:1", "conflicts": "c-queued-1"}


@pytest.fixture
def queued(listed) -> None:
    DjangoJournal().append(f"run-{RUN}", QUEUED, 1)
    projection.catch_up()


@pytest.mark.parametrize("path", QUEUE_PAGES)
@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        ("status=closed", "status", "status: 'closed' is no status of the "),
        ("status=Open", "status", "status: 'Open' is no status of the "),
        ("run=r%20one", "run", "run: 'r one' is not a run id (1 to 64 letters, digits,"),
        ("run=a/b", "run", "run: 'a/b' is not a run id"),
        (f"run={RUN}{'0' * 60}", "run", f"run: '{RUN}{'0' * 26}…' is not a run id"),
    ],
)
def test_a_review_queue_names_a_value_it_cannot_take(
    as_reviewer, token, queued, path, query, field, message
):
    """An unknown status listed the open items as if asked for them; a run id cut at 64
    characters, or one that is none, an empty queue."""
    before = written()
    answer = as_reviewer.get(f"/review/{path}?{query}")
    body = answer.content.decode()
    assert answer.status_code == 400
    assert message in said(body)
    assert f'<li id="{field}-error"><strong>{field}</strong>: ' in body
    assert "Nothing is listed: these filters cannot be used." in body
    assert QUEUE_PAGES[path] not in body  # no items, as if filtered
    assert f'href="/review/{path}?status=open"' in body  # the page's own choices still there
    assert written() == before
    # The API says it in the same words, naming the field.
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}").get(f"/api/review/{path}?{query}")
    assert api.status_code == 422
    assert [e["loc"] for e in api.json()["detail"]] == [["query", field]]
    # (a status it could not take was said in pydantic's words: "Input should be 'open', ...")
    assert f"{field}: {api.json()['detail'][0]['msg']}" in said(body)


@pytest.mark.parametrize("path", QUEUE_PAGES)
def test_a_queues_status_names_what_it_takes_and_keeps_a_good_run(as_reviewer, queued, path):
    body = as_reviewer.get(f"/review/{path}?status=closed&run={RUN}").content.decode()
    outcomes = "retried, discarded" if path == "dead-letters" else "resolved"
    assert f"one of open, {outcomes}, decided, all" in said(body)
    assert f'href="/review/{path}?status=decided&amp;run={RUN}"' in body  # the run kept


@pytest.mark.parametrize("path", QUEUE_PAGES)
def test_a_queue_refusing_one_value_keeps_the_metrics_filter_it_could_take(as_reviewer, path):
    """The queues take the metrics page's filter too: a refused status keeps it in the
    choices' links, and a refused date is the one left out of them."""
    body = as_reviewer.get(f"/review/{path}?status=closed&team=repo-fix").content.decode()
    assert f'href="/review/{path}?status=decided&amp;team=repo-fix"' in body
    answer = as_reviewer.get(f"/review/{path}?since=yesterday&team=repo-fix")
    assert answer.status_code == 400
    assert f'href="/review/{path}?status=open&amp;team=repo-fix"' in answer.content.decode()


@pytest.mark.parametrize("path", QUEUE_PAGES)
@pytest.mark.parametrize("query", ["", "status=open", "status=all", "status=", f"run={RUN}"])
def test_a_review_queue_lists_what_it_takes_as_before(as_reviewer, token, queued, path, query):
    answer = as_reviewer.get(f"/review/{path}?{query}")
    assert answer.status_code == 200 and QUEUE_PAGES[path] in answer.content.decode()
    # The API takes the same (a blank status was a 422 there: the open items on the page).
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}").get(f"/api/review/{path}?{query}")
    assert api.status_code == 200 and len(api.json()["items"]) == 1


@pytest.mark.parametrize("path", QUEUE_PAGES)
def test_a_review_queue_takes_the_statuses_its_api_lists(as_reviewer, token, queued, path):
    """One set, asked.queue_statuses: the API's schema lists it, and page and API take it."""
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    [status] = [
        p["schema"]
        for p in api.get("/api/openapi.json").json()["paths"][f"/api/review/{path}"]["get"][
            "parameters"
        ]
        if p["name"] == "status"
    ]
    queue = queues.DEAD_LETTERS if path == "dead-letters" else queues.CONFLICTS
    assert status["enum"] == list(asked.queue_statuses(queue)) and status["default"] == "open"
    for shown in status["enum"]:
        assert as_reviewer.get(f"/review/{path}?status={shown}").status_code == 200, shown
        assert api.get(f"/api/review/{path}?status={shown}").status_code == 200, shown


@pytest.mark.parametrize("path", QUEUE_PAGES)
def test_a_review_queue_takes_an_outcome_as_the_api_does(as_reviewer, token, queued, path):
    outcome = "retried" if path == "dead-letters" else "resolved"
    answer = as_reviewer.get(f"/review/{path}?status={outcome}")
    assert answer.status_code == 200 and f"No {outcome} " in answer.content.decode()
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert api.get(f"/api/review/{path}?status={outcome}").json()["items"] == []


TAB_PART = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "tab"}


def test_a_timeline_filter_puts_the_run_pages_address_in_the_bar(as_owner, listed):
    """htmx pushed the fragment's address (/runs/X/tabs/timeline?kind=...) into the bar."""
    query = "tab=timeline&kind=TeamStarted&agent="
    answer = as_owner.get(
        f"/runs/{RUN}/tabs/timeline?{query}", HTTP_HX_TRIGGER="timeline-filters", **TAB_PART
    )
    assert answer.status_code == 200
    assert answer["HX-Push-Url"] == f"/runs/{RUN}/?{query}"
    # A swap inside the tab that is not the filters' (a page of it) says its own address.
    assert "HX-Push-Url" not in as_owner.get(f"/runs/{RUN}/tabs/timeline?after=0", **TAB_PART)


@pytest.mark.parametrize(
    ("query", "field", "message"),
    [
        (
            "tab=timeline&after=abc",
            "after",
            "after: 'abc' is not a position (a whole number, 0 or more)",
        ),
        # It was taken for the start, as if it had not been asked.
        ("tab=timeline&after=-5", "after", "after: '-5' is not a position (a whole number,"),
        ("tab=threads&after=-1", "after", "after: '-1' is not a position"),
        ("tab=trace&call=-3", "call", "call: '-3' is not a position"),
        ("tab=threads&after=1.5", "after", "after: '1.5' is not a position"),
        ("tab=audit&after=%C2%B2", "after", "after: '²' is not a position"),
        ("tab=trace&after=later", "after", "after: 'later' is not a position"),
        ("tab=trace&call=first", "call", "call: 'first' is not a position"),
        # It was read as the last position there can be (an empty page), a number nobody
        # had asked for.
        (
            "tab=timeline&after=4611686018427387905",
            "after",
            "after: '4611686018427387905' is not a position: past the last there can be",
        ),
        ("tab=trace&call=" + "9" * 30, "call", "call: '" + "9" * 30 + "' is not a position: "),
        ("tab=timeline&kind=Bogus", "kind", "kind: 'Bogus' is no kind of event"),
        # Each was read as not asked: the timeline's start, its lease events hidden.
        ("tab=timeline&latest=yes", "latest", "latest: 'yes' is not a flag: 1, or left out"),
        ("tab=timeline&infra=true", "infra", "infra: 'true' is not a flag: 1, or left out"),
        ("tab=timeline&live=0", "live", "live: '0' is not a flag"),
        ("tab=trace&latest=-1", "latest", "latest: '-1' is not a flag"),
        ("tab=timelines", "tab", "tab: 'timelines' is no tab; one of timeline, trace, threads,"),
    ],
)
def test_a_runs_tab_names_a_value_it_cannot_take(as_owner, listed, query, field, message):
    """Each showed the tab from its start (or the timeline) as if the value had not been
    asked for."""
    before = written()
    answer = as_owner.get(f"/runs/{RUN}/?{query}")
    body = answer.content.decode()
    assert answer.status_code == 400
    assert message in said(body)
    assert f'<li id="{field}-error"><strong>{field}</strong>: ' in body
    assert 'role="tablist"' in body and 'id="run-header"' in body  # the page to go on from
    assert 'id="events"' not in body and "Page 1" not in body  # no rows as if from the start
    tab = query.split("&")[0].removeprefix("tab=")
    if tab != "timelines":
        # htmx asking for the tab's content (its filters and pages), and for the tabs.
        part = as_owner.get(f"/runs/{RUN}/tabs/{tab}?{query}", **TAB_PART)
        assert part.status_code == 400 and message in said(part.content.decode())
        assert "<html" not in part.content.decode()
        tabs = as_owner.get(f"/runs/{RUN}/tabs/{tab}?{query}", HTTP_HX_REQUEST="true")
        assert tabs.status_code == 400 and message in said(tabs.content.decode())
        assert 'role="tablist"' in tabs.content.decode()
    assert written() == before


def test_the_timelines_tail_names_a_value_it_cannot_take(as_owner, listed):
    answer = as_owner.get(f"/runs/{RUN}/tail?after=soon", HTTP_HX_REQUEST="true")
    body = answer.content.decode()
    assert answer.status_code == 400 and "after: 'soon' is not a position" in said(body)
    assert body.strip().startswith('<tr><td colspan="6">')  # a row, where the tail's was
    assert "hx-get" not in body  # it polls no more


@pytest.mark.parametrize("flag", ["latest", "live", "infra"])
def test_the_timelines_tail_names_a_flag_it_cannot_take(as_owner, listed, flag):
    """Each was read as not asked (a live poll's `live=on` as a "Next" link's)."""
    answer = as_owner.get(f"/runs/{RUN}/tail?after=0&{flag}=on", HTTP_HX_REQUEST="true")
    assert answer.status_code == 400
    assert f"{flag}: 'on' is not a flag: 1, or left out" in said(answer.content.decode())


def test_a_kind_the_run_has_none_of_is_chosen_in_its_box(as_owner, listed):
    """A kind of event the run has none of lists no events, and its box says what it was
    filtered by, where it said every kind over "No events"."""
    body = as_owner.get(f"/runs/{RUN}/?tab=timeline&kind=BudgetExhausted").content
    page = body.decode()
    assert '<option value="BudgetExhausted" selected>' in page
    assert 'class="event' not in page  # and no events


AGENTS = [
    AgentFinished(run_id=RUN, agent="coder"),
    AgentFinished(run_id=RUN, agent="reviewer"),
]


def test_an_agent_the_run_has_none_of_is_named_with_the_runs_agents(as_owner, listed):
    """It listed no events, as if that agent had done nothing (its box said so). The run is
    running: its agents so far."""
    DjangoJournal().append(f"run-{RUN}", AGENTS, 1)
    projection.catch_up()
    before = written()
    message = "agent: 'zed' is no agent of this run; its agents so far: coder, reviewer"
    for url, headers in (
        (f"/runs/{RUN}/?tab=timeline&agent=zed", {}),
        (f"/runs/{RUN}/tabs/timeline?agent=zed", TAB_PART),
        (f"/runs/{RUN}/tail?after=0&agent=zed", {"HTTP_HX_REQUEST": "true"}),
    ):
        answer = as_owner.get(url, **headers)
        body = answer.content.decode()
        assert answer.status_code == 400, url
        assert message in said(body), url
        assert 'class="event' not in body
    assert written() == before
    # One it has: its events, as before.
    answer = as_owner.get(f"/runs/{RUN}/?tab=timeline&agent=coder")
    assert answer.status_code == 200 and '<option value="coder" selected>' in answer.text
    assert answer.text.count('class="event') == 1


def test_an_agent_asked_of_a_run_with_none_is_named_so(as_owner, listed):
    answer = as_owner.get(f"/runs/{RUN}/?tab=timeline&agent=coder")
    assert answer.status_code == 400
    assert "agent: 'coder' is no agent of this run, which has none yet" in said(answer.text)


@pytest.mark.parametrize(
    "query",
    [
        "",
        "tab=timeline&after=0",
        "tab=timeline&after=4611686018427387904",  # the last there can be: past the end
        "tab=timeline&kind=TeamStarted",
        "tab=threads&after=3",
        "tab=audit",
        "tab=trace&after=0&call=1",
        "tab=trace&latest=1",
        "tab=timeline&latest=1&infra=1",
        "tab=timeline&latest=&infra=",
        "tab=bill&after=abc",  # a tab that reads no `after`
    ],
)
def test_a_runs_tabs_take_what_they_took(as_owner, listed, query):
    assert as_owner.get(f"/runs/{RUN}/?{query}").status_code == 200


@pytest.mark.parametrize(
    ("query", "kept"),
    [
        ("since=yesterday", '<input type="text" id="m-since" name="since" value="yesterday"'),
        ("until=2026-13-45", '<input type="text" id="m-until" name="until" value="2026-13-45"'),
        ("team=no-such-team", '<option value="no-such-team" selected>no-such-team</option>'),
        ("team=solo&scenario=first-flight", '<option value="first-flight" selected>'),
        ("model=gpt-nowhere", '<option value="gpt-nowhere" selected>gpt-nowhere</option>'),
    ],
)
def test_the_metrics_form_keeps_what_was_typed(as_owner, listed, query, kept):
    """The metrics page named a value it could not take, and drew its form with the date box
    empty and the team's, scenario's or model's at "any"."""
    before = written()
    answer = as_owner.get(f"/metrics?{query}")
    body = answer.content.decode()
    assert answer.status_code == 400 and kept in body
    boxes = [f for f in query.split("&") if not f.startswith(("since", "until"))]
    assert body.count(" selected") == len(boxes)  # each the typed one, not also another
    assert written() == before


@pytest.mark.parametrize("route", ["events", "threads", "audit"])
def test_the_api_names_a_position_it_cannot_take_as_the_tabs_do(as_owner, listed, token, route):
    """A negative `after` or one that is no number was a 422 in pydantic's words ("Input
    should be greater than or equal to 0"), where the page says what a position is."""
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    tab = "timeline" if route == "events" else route
    for after in ("-5", "abc", "%C2%B2", "9" * 20):
        answer = api.get(f"/api/runs/{RUN}/{route}?after={after}")
        assert answer.status_code == 422, after
        [error] = answer.json()["detail"]
        assert error["loc"] == ["query", "after"]
        page = as_owner.get(f"/runs/{RUN}/?tab={tab}&after={after}")
        assert page.status_code == 400 and f"after: {error['msg']}" in said(page.content.decode())
    assert api.get(f"/api/runs/{RUN}/{route}?after=0").status_code == 200
    assert api.get(f"/api/runs/{RUN}/{route}?after=").status_code == 200  # not asked, as a page


def test_the_api_names_a_kind_no_event_has_as_the_timeline_does(as_owner, listed, token):
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    answer = api.get(f"/api/runs/{RUN}/events?kind=Bogus")
    assert answer.status_code == 422  # it was an empty list, as if none had happened
    [error] = answer.json()["detail"]
    assert error["loc"] == ["query", "kind"] and error["msg"] == "'Bogus' is no kind of event"
    page = as_owner.get(f"/runs/{RUN}/?tab=timeline&kind=Bogus").content.decode()
    assert f"kind: {error['msg']}" in said(page)
    assert api.get(f"/api/runs/{RUN}/events?kind=BudgetExhausted").json() == []
    assert len(api.get(f"/api/runs/{RUN}/events?kind=TeamStarted").json()) == 1
    assert len(api.get(f"/api/runs/{RUN}/events?kind=").json()) == 1


def test_the_api_refuses_dates_the_wrong_way_round_as_the_metrics_do(as_owner, listed):
    for url in ("/api/runs", "/api/metrics"):
        answer = as_owner.get(f"{url}?since=2026-12-05&until=2026-12-01")
        assert answer.status_code == 422, url
        [problem] = answer.json()["detail"]
        assert problem["loc"] == ["query", "until"]
        assert problem["msg"] == "2026-12-01 is before since (2026-12-05)"


def test_an_ended_runs_agents_are_named_as_all_it_had():
    from dashboard.views.runs import no_such_agent

    said_of = no_such_agent("zed", ["coder", "tester"], active=False)
    assert said_of == "'zed' is no agent of this run; its agents: coder, tester"
    assert no_such_agent("zed", [], active=False) == "'zed' is no agent of this run, which has none"
