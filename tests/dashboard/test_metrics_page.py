"""The metrics page across runs: four plots drawn on the server as labelled SVG with their
numbers as tables, filters in the URL, an empty state that says what to do, and filter values
it cannot take named beside their field with a 400 (and by /api/metrics with a 422)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client
from django.utils.html import escape

from dashboard import charts
from dashboard.listing import DATES
from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import Checkpoint, RunSummary, StoredEvent
from journal_store.transfer import import_journal
from runtime.events import DeadLetterDiscarded, DeadLettered
from runtime.journal import append_next
from runtime.metrics import DEFINITIONS
from tests.dashboard.test_escaping import Elements

pytestmark = pytest.mark.django_db
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "journals"


def imported(*names: str) -> list[str]:
    ids = []
    for name in names:
        with (FIXTURES / name).open("rb") as source:
            ids += import_journal(source, name=name).run_ids
    projection.catch_up()
    return ids


@pytest.fixture
def stored():
    return imported("repo-fix.v1.jsonl", "solo.v1.jsonl")  # the desks write outside a run


def svgs(page: str) -> list[str]:
    return re.findall(r"<svg .*?</svg>", page, flags=re.S)


def test_the_page_plots_the_four_figures_with_titles_and_tables(as_owner, stored):
    answer = as_owner.get("/metrics")
    assert answer.status_code == 200
    page = answer.content.decode()
    plots = svgs(page)
    assert len(plots) == 4
    titles = [re.search(r"<title id=\"[a-z]+-title\">(.*?)</title>", p).group(1) for p in plots]
    assert titles[0].startswith("Spend per verified success")
    assert titles[1:] == [
        "Coordination overhead ratio per team",
        "Conflict and dead-letter rates per team",
        "Time waiting for people, per day",
    ]
    for plot in plots:
        assert 'role="img"' in plot and "aria-labelledby=" in plot and "<desc id=" in plot
        assert "<script" not in plot and "http://" not in plot.replace(
            'xmlns="http://www.w3.org/2000/svg"', ""
        )
    # The overhead bars carry each team's ratio; the table beside says the same numbers.
    assert "<title>repo-fix, overhead ratio: 0.70</title>" in plots[1]
    assert '<td class="num">340</td><td class="num">485</td><td class="num">0.701</td>' in page
    # The nav links here from every page.
    assert 'href="/metrics"' in as_owner.get("/").content.decode()


def test_time_waiting_for_people_reads_in_minutes_in_the_sum_the_chart_and_the_table(
    as_owner, stored
):
    # A dead letter a person decided a minute and a half after it was written.
    run_id = RunSummary.objects.get(team="repo-fix").run_id
    lettered = DeadLettered(run_id=run_id, letter_id="dl-1", reason="poison step", t=1000.0)
    decided = DeadLetterDiscarded(run_id=run_id, letter_id="dl-1", by="rev", reason="x", t=1090.0)
    append_next(DjangoJournal(), f"run-{run_id}", [lettered, decided])
    projection.catch_up()
    page = as_owner.get("/metrics").content.decode()
    assert "<div><dt>Waiting for people</dt><dd>1.5 min</dd></div>" in page  # not "2 min"
    waiting = re.search(r'aria-labelledby="h-waiting">.*?</section>', page, flags=re.S).group(0)
    assert "<title>11-30: 1.5 min</title>" in waiting
    head = re.search(r"<thead>.*?</thead>", waiting).group(0)
    assert ">Waited (min)</abbr>" in head and ">Mean (min)</abbr>" in head
    assert "seconds" not in head
    # The day's row says 1.5 (minutes), where it said 90.0 (seconds, unlabelled).
    assert '<th scope="row">2026-11-30</th><td class="num">1.5</td>' in waiting


def test_filters_live_in_the_url_and_narrow_the_figures(as_owner, stored):
    page = as_owner.get("/metrics?team=solo").content.decode()
    assert '<option value="solo" selected>solo</option>' in page
    assert "<title>solo, overhead ratio: 0.00</title>" in page
    assert "repo-fix, overhead ratio" not in page
    assert 'href="/metrics">every run</a>' in page


def scenarios_offered(page: str) -> list[str]:
    select = re.search(r'<select id="m-scenario".*?</select>', page, flags=re.S).group(0)
    return re.findall(r'<option value="([^"]*)"', select)


def test_a_chosen_team_narrows_the_scenarios_offered_to_its_own(as_owner, stored):
    every = scenarios_offered(as_owner.get("/metrics").content.decode())
    assert {"first-flight", "solo-fix", "double-refund"} <= set(every)
    assert scenarios_offered(as_owner.get("/metrics?team=solo").content.decode()) == [
        "",
        "solo-fix",
    ]
    repo_fix = scenarios_offered(as_owner.get("/metrics?team=repo-fix").content.decode())
    assert "first-flight" in repo_fix and "solo-fix" not in repo_fix
    assert "double-refund" not in repo_fix
    # A scenario of the team chosen is summed as before.
    answer = as_owner.get("/metrics?team=solo&scenario=solo-fix")
    assert answer.status_code == 200 and len(svgs(answer.content.decode())) == 4
    # One of another team is said beside the scenario, with the team's own still offered.
    refused = as_owner.get("/metrics?team=solo&scenario=first-flight")
    page = refused.content.decode()
    assert refused.status_code == 400 and svgs(page) == []
    assert '<li id="m-scenario-error"><strong>scenario</strong>: ' in page
    assert "is not a scenario of team" in page
    # The team's own offered, and the one typed, chosen, as it was asked for.
    assert scenarios_offered(page) == ["", "first-flight", "solo-fix"]
    assert '<option value="first-flight" selected>' in page


def test_with_no_runs_the_page_says_how_to_get_some(as_owner):
    answer = as_owner.get("/metrics")
    page = answer.content.decode()
    assert answer.status_code == 200
    assert "No runs yet" in page and 'href="/runs/new"' in page and 'href="/import"' in page
    assert svgs(page) == []


def test_when_no_run_matches_the_page_says_what_to_widen(as_owner, stored):
    page = as_owner.get("/metrics?since=2030-01-01").content.decode()
    assert "No runs match these filters" in page and "Widen the dates" in page
    assert svgs(page) == []


@pytest.mark.parametrize(
    ("query", "field", "said"),
    [
        ("since=2026-13-45", "since", "is not a date (YYYY-MM-DD)"),
        ("until=yesterday", "until", "is not a date (YYYY-MM-DD)"),
        # Dates Python reads in its other ISO forms, each of ten characters: a week's day
        # (2019-12-30) and a basic date with a time. Summed as days nobody typed.
        ("since=2020-W01-1", "since", "'2020-W01-1' is not a date (YYYY-MM-DD)"),
        ("until=20200101T0", "until", "'20200101T0' is not a date (YYYY-MM-DD)"),
        # The page says "before Started from", the API "before since": each names it its way.
        ("since=2026-12-01&until=2026-11-01", "until", "2026-11-01 is before "),
        ("team=no-such-team", "team", "no run or team knows team 'no-such-team'"),
        ("scenario=nothing-like-it", "scenario", "no run or team knows scenario"),
        (
            "team=solo&scenario=first-flight",
            "scenario",
            "'first-flight' is not a scenario of team 'solo' (its scenarios: solo-fix)",
        ),
        ("model=gpt-nowhere", "model", "no run or team knows model 'gpt-nowhere'"),
        ("team=" + "x" * 5000, "team", "longer than 64 characters"),
        ("model=a%00b", "model", "holds control characters"),
    ],
)
def test_a_filter_value_it_cannot_take_is_named_and_nothing_summed(
    as_owner, stored, query, field, said
):
    events, marks = StoredEvent.objects.count(), list(Checkpoint.objects.values_list())
    page = as_owner.get(f"/metrics?{query}")
    body = page.content.decode()
    assert page.status_code == 400
    assert f'<li id="m-{field}-error"><strong>{DATES.get(field, field)}</strong>: ' in body
    assert said.replace("'", "&#x27;") in body
    assert "Nothing was summed" in body and svgs(body) == []
    assert "x" * 100 not in body  # a huge value is not repeated whole
    api = as_owner.get(f"/api/metrics?{query}")
    assert api.status_code == 422  # as any query value the API refuses, in the same shape
    named = {e["loc"][-1]: e["msg"] for e in api.json()["detail"]}
    assert said in named[field] and all(e["loc"][0] == "query" for e in api.json()["detail"])
    # Reading wrote nothing.
    assert StoredEvent.objects.count() == events
    assert list(Checkpoint.objects.values_list()) == marks


def test_a_hostile_value_comes_back_as_text(as_owner, stored):
    body = as_owner.get("/metrics?team=%3Cscript%3Ealert(1)%3C/script%3E").content.decode()
    assert "<script>alert(1)" not in body and "&lt;script&gt;alert(1)" in body
    parsed = Elements()
    parsed.feed(body)
    assert parsed.unguarded == []


def test_a_far_off_until_is_no_bound_rather_than_an_error(as_owner, stored):
    answer = as_owner.get("/metrics?until=9999-12-31")
    assert answer.status_code == 200 and len(svgs(answer.content.decode())) == 4


def test_a_bar_label_is_text_in_the_svg():
    drawn = charts.bars("k", "T <b>", "D & d", [('<script>"x"', [0.5])], ["s"])
    assert "<script>" not in drawn and "&lt;script&gt;&quot;x&quot;" in drawn
    assert '<title id="k-title">T &lt;b&gt;</title>' in drawn


def test_nobody_signed_out_sees_the_figures(stored):
    assert Client().get("/metrics").status_code == 302
    assert Client().get("/api/metrics").status_code == 401


def test_the_run_page_has_a_metrics_tab_with_definitions_and_why_not_known(as_owner, stored):
    run_id = RunSummary.objects.get(team="repo-fix").run_id
    page = as_owner.get(f"/runs/{run_id}/?tab=metrics").content.decode()
    assert 'id="tab-metrics"' in page and 'aria-selected="true"' in page
    row = re.search(
        r'<tr id="metric-conflict_resolution_latency">.*?</tr>', page, flags=re.S
    ).group(0)
    assert "not known" in row
    assert "Not known: no conflict was parked for a person" in row
    overhead = re.search(
        r'<tr id="metric-coordination_overhead_ratio">.*?</tr>', page, flags=re.S
    ).group(0)
    assert ">0.701<" in overhead and "Tokens of agents that only coordinate" in overhead
    assert "coordination_tokens 340" in overhead
    partial = as_owner.get(f"/runs/{run_id}/tabs/metrics", HTTP_HX_REQUEST="true")
    assert partial.status_code == 200 and 'table class="metrics"' in partial.content.decode()


def test_a_short_wait_reads_as_under_a_tenth_of_a_minute_not_as_none():
    from dashboard.views.metrics import minutes

    assert [minutes(s) for s in (0, 2, 3.5, 90, 36_000)] == ["0.0", "<0.1", "0.1", "1.5", "600.0"]


def test_a_number_of_tokens_reads_one_way_on_the_metrics_page():
    """One figure was written "1347 tokens", "1,347" and "1346.7" on the same page."""
    from dashboard.templatetags.minutes import tokens

    assert [tokens(v) for v in (1346.7, 1347, 20505.0, None, "n/a")] == [
        "1,347",
        "1,347",
        "20,505",
        None,
        "n/a",
    ]


def test_the_page_says_what_each_figure_means(as_owner, stored):
    """On the page, where a person reading it can open it: docs/ is the repository's."""
    page = as_owner.get("/metrics").content.decode()
    assert 'href="#definitions"' in page and 'id="definitions"' in page
    for definition in DEFINITIONS.values():
        assert escape(definition) in page
    assert "docs/metrics.md" not in page


def test_a_page_with_filters_it_cannot_take_still_says_what_each_figure_means(as_owner):
    page = as_owner.get("/metrics?since=not-a-date")
    assert page.status_code == 400
    assert 'href="#definitions"' in page.content.decode()
    assert 'id="definitions"' in page.content.decode()


def test_runs_without_a_start_time_are_said_beside_the_periods_that_leave_them_out(
    as_owner, stored
):
    """The sum said "Runs 3" over a table of days whose runs added up to 2, and nothing said
    where the third was: a run with no start time (a journal written without times) is on no
    day."""
    from tests.dashboard.test_escaping import hostile_run

    hostile_run()
    page = as_owner.get("/metrics").content.decode()
    assert "<div><dt>Runs</dt><dd>3</dd></div>" in page
    said = re.search(r'<p class="muted" id="undated">(.*?)</p>', page, flags=re.S)
    assert said is not None, "the page does not say where the third run went"
    assert said.group(1) == (
        "1 of these 3 runs has no start time (imported reference journals have none), so no "
        "day holds it: the days above hold the other 2."
    )
    body = as_owner.get("/api/metrics").json()
    assert body["undated"] == 1
    assert sum(p["runs"] for p in body["periods"]) + body["undated"] == body["totals"]["runs"]
    # A date range leaves such runs out, as it says; nothing then is undated.
    dated = as_owner.get("/metrics?since=2000-01-01").content.decode()
    assert 'id="undated"' not in dated
    assert as_owner.get("/api/metrics?since=2000-01-01").json()["undated"] == 0
