"""What a newcomer saw on a fresh install, per run, per team and in all.

A desk's flip-flop run livelocks with no task reviewed: its API said livelock_rate 1.0 beside
"livelocked 1, reviewed_tasks 0", its team's row on /metrics said no rate, and the totals said 1.0
(livelocked 2 of reviewed 2) where the only team with a denominator, repo-fix, said 0.5. The rate
divides by the tasks looked at (reviewed, and every one that livelocked), per run, per team and
in all alike, and across runs it is a ratio of sums.

A refund saga that failed and was compensated ends "undone (compensated)" in the runs list; it
counted as a verified success on its Metrics tab and on /metrics. It counts where the list
puts it: not among the verified successes.
"""

from __future__ import annotations

import html
import re

import pytest

from journal_store import projection
from journal_store.models import RunSummary
from runtime.jsonl import JsonlJournal
from tests.journal_store.test_projection_matches_views import store

pytestmark = pytest.mark.django_db
FLOWN = [
    ("support-desk", "flip-flop"),  # livelocks, nothing reviewed
    ("repo-fix", "reject-loop"),  # livelocks at the REJECT cap, reviewed
    ("repo-fix", "first-flight"),  # reviewed, accepted
    ("support-triage", "refund-saga"),  # done, its refund undone
]


@pytest.fixture
def flown(fly_team) -> dict[str, str]:
    ids = {}
    for team, scenario in FLOWN:
        flight = fly_team(scenario, team=team)
        store("default", JsonlJournal(flight.path).read_all())
        ids[scenario] = flight.run_id
    projection.catch_up()
    return ids


def test_a_livelock_nothing_reviewed_is_counted_where_its_rate_divides(as_owner, flown):
    body = as_owner.get("/api/metrics").json()
    teams = {t["team"]: t for t in body["teams"]}
    desk, fix, totals = teams["support-desk"], teams["repo-fix"], body["totals"]
    # The run's own rate, its team's and the totals agree: 1 of 1, 1 of 2, 2 of 3.
    assert (desk["livelock_rate"], fix["livelock_rate"]) == (1.0, 0.5)
    assert totals["livelock_rate"] == round(2 / 3, 4)

    detail = as_owner.get(f"/api/runs/{flown['flip-flop']}/metrics").json()["livelock_rate"]
    assert detail["value"] == 1.0
    assert detail["detail"]["livelocked"] == detail["detail"]["looked_at"] == 1
    assert detail["detail"]["reviewed_tasks"] == 0
    for figures in (*teams.values(), totals):
        assert figures["livelocked_tasks"] <= figures["looked_at_tasks"], figures.get("team")
    assert (desk["livelocked_tasks"], desk["looked_at_tasks"]) == (1, 1)
    assert (fix["livelocked_tasks"], fix["looked_at_tasks"]) == (1, 2)
    # In all: the teams' sums added, then divided (not 1.0, nor the mean of 1.0 and 0.5).
    assert (totals["livelocked_tasks"], totals["looked_at_tasks"]) == (2, 3)

    page = html.unescape(as_owner.get("/metrics").content.decode())
    # The last table gives every rate per team: Duplicate, Stale, Hand-offs failed, Livelock...
    row = page[page.rindex('">support-desk</a></th>') :].split("</tr>")[0]  # (its runs' link)
    assert re.findall(r'<td class="num">([^<]*)</td>', row)[3] == "1.0"  # where it said no rate


def test_a_compensated_run_is_no_verified_success_as_the_runs_list_says(as_owner, flown):
    saga = flown["refund-saga"]
    assert RunSummary.objects.get(run_id=saga).status == "compensated"
    listed = as_owner.get(f"/api/runs/{saga}").json()
    assert listed["status"] == "compensated"
    cost = as_owner.get(f"/api/runs/{saga}/metrics").json()[
        "coordination_cost_per_verified_success"
    ]
    assert cost["value"] is None and cost["detail"]["verified_successes"] == 0
    assert "undone (compensated)" in cost["reason"]

    body = as_owner.get("/api/metrics").json()
    teams = {t["team"]: t for t in body["teams"]}
    assert teams["support-triage"]["verified"] == 0
    assert teams["support-triage"]["tokens_per_verified_success"] is None
    # The verified successes are the runs the list says are done, team by team and in all.
    done = RunSummary.objects.filter(status="done")
    assert body["totals"]["verified"] == done.count() == 1  # first-flight
    for team, figures in teams.items():
        assert figures["verified"] == done.filter(team=team).count(), team
