"""Every page and partial: status codes, what they show, filters, paging, and query counts
that do not grow with the rows shown."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from journal_store.models import RunSummary
from tests.dashboard.conftest import run_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]
HTMX = {"HTTP_HX_REQUEST": "true"}


def test_every_page_needs_a_login(client, done_run):
    for url in [
        "/",
        "/runs/new",
        f"/runs/{done_run}/",
        "/review/dead-letters",
        "/review/conflicts",
        "/import",
    ]:
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/login"), url


def test_the_runs_list_shows_each_run_with_its_figures(as_owner, done_run):
    page = as_owner.get("/").content.decode()
    assert done_run in page and "premature-done" in page and ">done<" in page
    summary = RunSummary.objects.get(run_id=done_run)
    assert f"{summary.tokens}<span" in page and f"/ {summary.allowance:,}" in page
    assert '<span class="muted">1 run</span>' in page  # not "1 runs"
    run_of("premature-done")
    assert '<span class="muted">2 runs</span>' in as_owner.get("/").content.decode()


def test_filters_search_and_sorting(as_owner, owner):
    done = run_of("first-flight")
    parked = run_of("silent-dropout")

    def ids(query):
        page = as_owner.get("/" + query).content.decode()
        return [r for r in (done, parked) if r in page]

    assert ids("?status=done") == [done]
    assert ids("?status=dead-lettered") == [parked]
    assert ids("?team=solo") == []
    assert ids("?q=" + parked[2:8]) == [parked]
    assert ids("?since=2000-01-01&until=2999-12-31") == [done, parked]
    assert ids("?since=2999-01-01") == []
    # A bad date or an unknown status is refused by name (a 400, no runs listed), where the
    # page ignored it and listed runs nobody asked for (test_filters_a_page_cannot_take.py).
    assert ids("?since=not-a-date") == []
    assert ids("?status=finished") == []
    page = as_owner.get("/?sort=tokens").content.decode()
    assert page.index(done) < page.index(parked)  # the first flight spent more


def test_the_team_box_says_which_team_the_list_shows(as_owner, owner):
    """A team that is not installed here (an imported run's, or a misspelt one in the address)
    is in the Team box, chosen, where the box said 'any' over a list of that team's runs (or
    over 'No runs match'), and an imported run's team could not be chosen at all."""
    from journal_store import projection
    from journal_store.journal import DjangoJournal
    from runtime.events import TeamStarted

    run_of("first-flight")
    started = TeamStarted(run_id="r-elsewhere", team="their-team", scenario="s", task="t")
    DjangoJournal().append("run-r-elsewhere", [started], 0)
    projection.catch_up()

    def chosen(query):
        page = as_owner.get("/" + query).content.decode()
        box = page[page.index('<select id="team"') :]
        box = box[: box.index("</select>")]
        return re.findall(r'<option value="([^"]*)" selected', box), "r-elsewhere" in page

    assert chosen("") == ([], True)
    assert chosen("?team=their-team") == (["their-team"], True)
    assert chosen("?team=repo-fix") == (["repo-fix"], False)
    assert chosen("?team=nope") == (["nope"], False)
    page = as_owner.get("/").content.decode()
    assert '<option value="their-team"' in page  # an imported run's team can be chosen


def test_the_list_pages_fifty_runs_at_a_time(as_owner, owner):
    from journal_store import projection
    from journal_store.journal import DjangoJournal
    from runtime.events import TeamStarted

    journal = DjangoJournal()
    for n in range(55):
        journal.append(
            f"run-r-bulk{n:03d}",
            [
                TeamStarted(
                    run_id=f"r-bulk{n:03d}", team="solo", scenario="solo-fix", task=f"task {n}"
                )
            ],
            0,
        )
    projection.catch_up()
    first = as_owner.get("/").content.decode()
    assert '<span class="muted">50 runs</span>' in first and "First page" not in first
    # The Next link goes on after the last run shown (dashboard/run_pages.py).
    [after] = re.findall(r'<a href="\?&amp;after=([\w-]+)"[^>]*>Next →</a>', first)
    second = as_owner.get(f"/?after={after}").content.decode()
    assert '<span class="muted">5 runs further on</span>' in second and "Next →" not in second
    assert '<a href="?" hx-get="?" hx-target="#runs" hx-push-url="true">← First page</a>' in second
    assert '<caption class="skip">Runs, newest first</caption>' in first
    oldest = as_owner.get("/?sort=oldest").content.decode()
    assert '<caption class="skip">Runs, oldest first</caption>' in oldest
    shown = re.findall(r"r-bulk\d{3}", first) + re.findall(r"r-bulk\d{3}", second)
    assert sorted(set(shown)) == [f"r-bulk{n:03d}" for n in range(55)]
    assert not set(re.findall(r"r-bulk\d{3}", first)) & set(re.findall(r"r-bulk\d{3}", second))


def test_a_partial_for_htmx_and_the_whole_page_without_it(as_owner, done_run):
    whole = as_owner.get(f"/runs/{done_run}/?tab=bill").content.decode()
    assert "<html" in whole and "<svg" in whole
    partial = as_owner.get(f"/runs/{done_run}/tabs/bill", **HTMX).content.decode()
    assert "<html" not in partial and "<svg" in partial and 'aria-selected="true"' in partial
    plain = as_owner.get(f"/runs/{done_run}/tabs/bill")
    assert plain.status_code == 302 and plain["Location"].endswith("tab=bill")


def test_a_tab_address_htmx_restores_from_history_or_a_reload_is_the_whole_page(as_owner, done_run):
    """htmx asks for a page its history cache lost with HX-Request too, and puts the answer in
    place of the whole body: a tab alone there was a page with no header or navigation. And
    a filter's address (which names its tab) came back naming it twice."""
    restore = {**HTMX, "HTTP_HX_HISTORY_RESTORE_REQUEST": "true"}
    answer = as_owner.get(f"/runs/{done_run}/tabs/timeline?kind=ModelCalled", **restore)
    assert answer.status_code == 302
    assert answer["Location"] == f"/runs/{done_run}/?kind=ModelCalled&tab=timeline"
    plain = as_owner.get(f"/runs/{done_run}/tabs/timeline?tab=timeline&kind=ModelCalled")
    assert plain["Location"] == f"/runs/{done_run}/?tab=timeline&kind=ModelCalled"
    assert "<html" in as_owner.get(answer["Location"]).content.decode()


@pytest.mark.parametrize(
    "tab, shows",
    [
        ("timeline", ["TeamStarted", "ModelResponded", "<details>"]),
        ("threads", ["REQUEST", "REJECT", "ACCEPT", "Thread T1"]),
        ("bill", ["<svg", "coder", "Per agent and task"]),
        ("audit", ["REJECT", "ACCEPT", "Integrated", "relied on reviewer"]),
        ("findings", ["done_without_evidence", "Shown by events"]),
    ],
)
def test_each_tab_shows_its_part_of_the_minutes(as_owner, done_run, tab, shows):
    page = as_owner.get(f"/runs/{done_run}/?tab={tab}").content.decode()
    for text in shows:
        assert text in page, (tab, text)


def test_the_timeline_filters_and_pages_by_position(as_owner, done_run):
    page = as_owner.get(f"/runs/{done_run}/?tab=timeline&kind=ToolReturned").content.decode()
    assert "ToolReturned" in page and "ModelCalled</span>" not in page
    first = as_owner.get(f"/runs/{done_run}/?tab=timeline").content.decode()
    assert "Next 50 events after" in first
    tail = as_owner.get(f"/runs/{done_run}/tail?after=10000000", **HTMX)
    assert tail.status_code == 286  # a finished run: stop polling


def test_rows_and_headers_of_a_finished_run_stop_polling(as_owner, done_run):
    assert as_owner.get(f"/runs/{done_run}/row", **HTMX).status_code == 286
    assert as_owner.get(f"/runs/{done_run}/header", **HTMX).status_code == 286


def test_an_active_run_keeps_polling(as_owner, owner):
    run_id = run_of("first-flight", steps=2)
    assert as_owner.get(f"/runs/{run_id}/row", **HTMX).status_code == 200
    page = as_owner.get(f"/runs/{run_id}/").content.decode()
    assert 'hx-trigger="every 2s"' in page and "Live: new events appear here" in page


def test_an_unknown_run_or_tab_is_a_clear_error(as_owner, done_run):
    assert as_owner.get("/runs/r-nope/").status_code == 404
    assert as_owner.get(f"/runs/{done_run}/tabs/nope", **HTMX).status_code == 404


def test_export_downloads_the_journal(as_owner, done_run):
    response = as_owner.get(f"/runs/{done_run}/export.jsonl")
    body = b"".join(response.streaming_content).decode()
    assert response["Content-Disposition"] == f'attachment; filename="{done_run}.jsonl"'
    assert body.splitlines()[0].startswith('{"kind":"TeamStarted"')


def test_check_replay_says_identical(as_owner, done_run):
    page = as_owner.post(f"/runs/{done_run}/replay").content.decode()
    assert "identical: all" in page


def test_query_count_does_not_grow_with_the_rows_shown(as_owner, owner):
    def queries(url):
        with CaptureQueriesContext(connection) as captured:
            assert as_owner.get(url).status_code == 200
        return len(captured)

    small = run_of("first-flight")
    few = (
        queries("/"),
        queries(f"/runs/{small}/?tab=timeline"),
        queries(f"/runs/{small}/?tab=threads"),
        queries(f"/runs/{small}/?tab=audit"),
    )
    for _ in range(3):
        run_of("premature-done")
    big = run_of("reject-loop")  # more events, messages and audit entries than the first
    many = (
        queries("/"),
        queries(f"/runs/{big}/?tab=timeline"),
        queries(f"/runs/{big}/?tab=threads"),
        queries(f"/runs/{big}/?tab=audit"),
    )
    assert many == few
