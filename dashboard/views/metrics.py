"""The metrics page: is the team worth it, across runs (services/metrics.py sums the figures).

Filters live in the URL (`?team=&scenario=&model=&since=&until=`), so a view of the figures is
a link to keep or send. A value the page cannot take is named beside its field, with a 400, and
nothing is summed.
"""

from __future__ import annotations

from datetime import date
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from dashboard import charts, listing
from dashboard.access import HtmxHttpRequest
from dashboard.asked import typed
from journal_store.models import RunSummary
from runtime.metrics import DEFINITIONS, TITLES, Named, title
from services import metrics

TEMPLATE = "dashboard/metrics.html"
# The last table's columns, in order: every rate per team (each headed by its short name).
RATE_COLUMNS = (
    "duplicate_work_rate",
    "stale_message_rate",
    "handoff_failure_rate",
    "livelock_rate",
    "deadlock_rate",
    "commitment_orphan_rate",
    "verification_independence_rate",
    "coordination_cost_per_verified_success",
)
LABELS = {"day": "%m-%d", "week": "%m-%d", "month": "%Y-%m"}


def ratio(value: float) -> str:
    return f"{value:.2f}"


def percent(value: float) -> str:
    return f"{value:.0%}"


def minutes(seconds: float) -> str:
    """Seconds as the minutes every figure of waiting on this page reads in: the chart, its
    table (once in seconds, unlabelled) and the sum above (once rounded to whole minutes).
    A wait too short to show in tenths is "<0.1", not "0.0", which would say nobody waited."""
    if seconds > 0 and f"{seconds / 60:.1f}" == "0.0":
        return "<0.1"
    return f"{seconds / 60:,.1f}"


def minutes_of(seconds: float) -> str:
    return f"{minutes(seconds)} min"


def label(start: date, period: str) -> str:
    return start.strftime(LABELS[period])


def plots(found: metrics.Across) -> dict[str, Any]:
    """The four charts, each with what its table shows beside it."""
    # Money when every run is priced and something cost money; tokens otherwise (scripted and
    # local runs are priced at 0: a flat line at 0 would say nothing).
    money = bool(found.totals["cost_per_verified_success"])
    currency = settings.PRICES.currency
    unit = currency if money else "tokens"
    spend_key = "cost_per_verified_success" if money else "tokens_per_verified_success"
    spend = [(label(p["start"], found.period), p[spend_key]) for p in found.periods]
    waits = [(label(p["start"], found.period), p["human_wait"]) for p in found.periods]
    teams = found.teams
    return {
        "unit": unit,
        "spend_key": spend_key,
        # No wait a person ended (only those have a length): "0.0 min" read as nobody waited,
        # beside the items undecided now.
        "waited": minutes_of(found.totals["human_wait"]) if found.totals["human_wait"] else None,
        "waits": [
            {
                "start": p["start"],
                "waited": minutes(p["human_wait"]),
                "resolved": p["conflicts_resolved"],
                "mean": None
                if p["conflict_resolution_latency"] is None
                else minutes(p["conflict_resolution_latency"]),
            }
            for p in found.periods
        ],
        "spend": charts.over_time(
            "spend",
            f"Spend per verified success, {unit}, per {found.period}",
            f"All runs' spend in {unit} over the runs the harness verified done, per "
            f"{found.period} the runs started in; a gap: no verified success that {found.period}.",
            spend,
            (lambda v: f"{v:,.4f}") if money else (lambda v: f"{v:,.0f}"),
        ),
        "overhead": charts.bars(
            "overhead",
            "Coordination overhead ratio per team",
            "Tokens of agents that only coordinate over tokens of agents doing the work, per "
            "team; 0: the harness coordinates at no token cost; a dash: no work tokens.",
            [(t["team"], [t["coordination_overhead_ratio"]]) for t in teams],
            ["overhead ratio"],
            ratio,
        ),
        "trouble": charts.bars(
            "trouble",
            "Conflict and dead-letter rates per team",
            "Per team, the share of runs that parked a conflict for a person, and the share "
            "that dead-lettered work.",
            [(t["team"], [t["conflict_run_rate"], t["dead_letter_run_rate"]]) for t in teams],
            ["runs with a conflict", "runs with a dead letter"],
            percent,
        ),
        "waiting": charts.over_time(
            "waiting",
            f"Time waiting for people, per {found.period}",
            "Minutes conflicts and dead letters waited for a person's decision, summed over "
            f"the runs that started each {found.period}.",
            waits,
            minutes_of,
            kind="columns",
        ),
    }


def definitions() -> list[tuple[str, Named, str]]:
    """Each metric's key, names and definition, for the list at the foot of the page."""
    return [(name, title(name), said) for name, said in DEFINITIONS.items()]


@login_required
@require_safe
def metrics_page(request: HtmxHttpRequest) -> HttpResponse:
    choices = metrics.Choices.read()
    asked = {name: request.GET.get(name, "")[:200] for name in ("team", "scenario", "model")}
    # With a team chosen, only its scenarios are offered (and a scenario of another team in the
    # URL is refused by name, below, rather than summed as no runs).
    offered = choices.for_team(asked["team"].strip())
    context: dict[str, Any] = {
        # Said on the page, where a person reading it can open them (docs/ is the repo's).
        "definitions": definitions(),
        # The headings name the metrics as the run's Metrics tab does (runtime.metrics).
        "names": TITLES,
        "rate_columns": [(key, title(key)) for key in RATE_COLUMNS],
        "choices": choices,
        "asked": asked | {name: request.GET.get(name, "")[:40] for name in metrics.DATE_FIELDS},
        "problems": {},
        # The date boxes, named as the form labels them in a refusal, as the runs list does
        # (listing.DATES; the API says "since").
        "labels": listing.DATES,
        "selects": [
            ("team", "Team", choices.team),
            ("scenario", "Scenario", offered.scenario),
            ("model", "Model", choices.model),
        ],
    }
    try:
        chosen = metrics.MetricsFilter.parse(request.GET, choices, listing.DATES)
    except metrics.BadFilter as exc:
        # Each field as it was typed, and why it cannot be used beside it; nothing summed.
        context["problems"] = exc.problems
        context["typed"] = typed(request.GET, tuple(exc.problems))
        return render(request, TEMPLATE, context, status=400)
    found = metrics.across(chosen)
    context |= {
        "found": found,
        "plots": plots(found) if found.totals["runs"] else None,
        "stored": found.totals["runs"] > 0 or RunSummary.objects.exists(),
        "filtered": bool(chosen.params()),
        # The review queues choose runs as this page does: its undecided items link to those.
        "chosen_query": urlencode(chosen.params()),
        # Each team's row links to its runs, the other filters kept; the runs with no team
        # are chosen by the name their row shows (metrics.NO_TEAM).
        "teams": [
            {**row, "query": urlencode(chosen.params() | {"team": row["team"]})}
            for row in found.teams
        ],
        "periods_filled": metrics.PERIODS_FILLED,
        "dated": found.totals["runs"] - found.undated,
    }
    return render(request, TEMPLATE, context)
