"""Runs with no team (a journal written without TeamStarted, as the coordination drills are)
are the teams table's "(none)" row, and its link chooses them: page and API alike. "(none)"
cannot be a team's name (runtime/team.py TEAM_NAME), so it never chooses a team's runs."""

from __future__ import annotations

import dataclasses
import html
import re
from urllib.parse import parse_qs

import pytest

from journal_store import projection
from journal_store.models import RunSummary
from services.metrics import NO_TEAM
from teams import TEAMS
from tests.coordination import drills
from tests.dashboard.test_metrics_page import imported
from tests.journal_store.test_projection_matches_views import store

pytestmark = pytest.mark.django_db


@pytest.fixture
def stored():
    imported("repo-fix.v1.jsonl")
    for drill in ("lease-pair", "forgetful-owner"):
        store("default", drills.flown(drill).records)
    projection.catch_up()


def team_links(page: str) -> dict[str, str]:
    """Each teams table row's name and the query its link asks for."""
    found = re.findall(r'<th scope="row"><a href="\?([^"]*)">([^<]*)</a></th>', page)
    return {html.unescape(name): html.unescape(query) for query, name in found}


def test_the_none_rows_link_chooses_the_runs_with_no_team(as_owner, stored):
    links = team_links(as_owner.get("/metrics").content.decode())
    assert set(links) == {"(none)", "repo-fix"}
    chosen = as_owner.get("/metrics?" + links["(none)"])
    assert chosen.status_code == 200, chosen.content
    assert team_links(chosen.content.decode()) == {"(none)": links["(none)"]}
    api = as_owner.get("/api/metrics", {"team": NO_TEAM})
    assert api.status_code == 200, api.content
    body = api.json()
    assert body["totals"]["runs"] == 2 and [t["team"] for t in body["teams"]] == ["(none)"]
    assert body["filters"]["team"] == NO_TEAM
    # The undecided items' links carry the filter to the review queues, which read it alike.
    queue = as_owner.get("/review/conflicts", {"team": NO_TEAM})
    assert queue.status_code == 200 and "with no team" in queue.content.decode()
    everyone = as_owner.get("/api/metrics").json()
    assert {t["team"]: t["runs"] for t in everyone["teams"]} == {"(none)": 2, "repo-fix": 1}


def test_a_rows_link_keeps_the_other_filters(as_owner, stored):
    links = team_links(as_owner.get("/metrics?until=2999-01-01").content.decode())
    assert parse_qs(links["(none)"]) == {"team": [NO_TEAM], "until": ["2999-01-01"]}


def test_the_team_select_offers_the_runs_with_no_team_when_there_are_some(as_owner, stored):
    page = as_owner.get("/metrics").content.decode()
    assert '<option value="(none)">' in page


def test_a_scenario_beside_no_team_is_refused_as_another_teams_is(as_owner, stored):
    api = as_owner.get("/api/metrics", {"team": NO_TEAM, "scenario": "first-flight"})
    [problem] = api.json()["detail"]
    assert api.status_code == 422 and problem["loc"] == ["query", "scenario"]


def test_no_team_may_be_named_as_the_runs_with_no_team_are():
    with pytest.raises(ValueError, match=r"team name '\(none\)'"):
        dataclasses.replace(TEAMS["solo"], name=NO_TEAM)


def test_the_runs_list_chooses_the_runs_with_no_team_as_the_metrics_page_does(as_owner, stored):
    teamless = sorted(RunSummary.objects.filter(team="").values_list("run_id", flat=True))
    assert len(teamless) == 2
    api = as_owner.get("/api/runs", {"team": NO_TEAM})
    assert api.status_code == 200, api.content
    assert sorted(r["run_id"] for r in api.json()["items"]) == teamless
    page = as_owner.get("/", {"team": NO_TEAM})
    assert page.status_code == 200, page.content
    shown = set(re.findall(r'<tr id="row-([^"]+)"', page.content.decode()))
    assert shown == set(teamless)
    # The team menu offers them, chosen, as the metrics page's does.
    assert '<option value="(none)" selected>' in page.content.decode()
    # A team's own runs are not among them, nor the teamless among a team's.
    team_runs = as_owner.get("/api/runs", {"team": "repo-fix"}).json()["items"]
    assert len(team_runs) == 1 and team_runs[0]["run_id"] not in teamless


def test_the_runs_list_offers_no_team_only_when_some_run_has_none(as_owner):
    imported("repo-fix.v1.jsonl")
    page = as_owner.get("/").content.decode()
    assert 'value="(none)"' not in page
