"""The runs read model's columns, each from the result of the fold that gives it: the summary's,
the bill's totals and money, the resume point's, and the coordination metrics' parts (which the
metrics page sums: journal_store/metrics_days.py). The runs projector writes them as a run's
folds move (journal_store/projection.py); a migration that adds a column fills it with
`columns_of` from the stored states."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise
from typing import Any

from django.conf import settings

from runtime import folds, instants, metric_values, prices
from runtime.bill import ancestors_of, model_for
from runtime.folds import Fold
from runtime.metric_sums import summed
from runtime.views import STORED as RUN_FOLDS


def when(t: float | None) -> datetime | None:
    """A timestamp as a datetime; None when it was not recorded (reference journals: t=0)."""
    return datetime.fromtimestamp(t, tz=UTC) if t else None


def day(t: float | None) -> date | None:
    return datetime.fromtimestamp(t, tz=UTC).date() if t else None


def stopped_after(s: dict[str, Any]) -> timedelta | None:
    """The run's duration once its clock has stopped (the summary's `finished`: a verdict, a
    dead letter, an interrupt, an import), less the time it stood waiting for a person, as
    its page says it (present.duration); None while it runs, or without a start."""
    started, finished = when(s["started"]), when(s["finished"])
    if started is None or finished is None:
        return None
    return finished - started - timedelta(seconds=s.get("waited") or 0.0)


# The summary's columns, from the folds that give them (their results need no rows).
def summary_columns(s: dict[str, Any]) -> dict[str, Any]:
    return {
        "team": s["team"] or "",
        "scenario": s["scenario"] or "",
        "task": s["task"] or "",
        "started_by": s["started_by"] or "",
        "status": s["status"],
        "reason": s["reason"],
        "started_at": when(s["started"]),
        # The day it started (UTC): the metrics page groups by it without a date function per
        # row (SQLite's are Python callbacks: 140 ms over 10,000 runs).
        "started_on": day(s["started"]),
        "finished_at": when(s["finished"]),
        "waited": timedelta(seconds=s.get("waited") or 0.0),
        "duration": stopped_after(s),
        "event_count": s["events"],
        "last_position": s["last_position"],
        "parent_id": s.get("parent") or "",
        "fork_at": s.get("fork_at"),
        "baseline_of": s.get("baseline_of") or "",
    }


def bill_columns(b: dict[str, Any]) -> dict[str, Any]:
    return {
        "tokens": b["total"]["tokens"],
        "calls": b["total"]["calls"],
        "allowance": b["allowance"],
        "spent": b["spent"],
        # In the price table of the projection's time (settings.PRICES): a new table applies to
        # runs as they move, and to every run after `manage.py rebuild_projections`.
        "cost": prices.priced(b, settings.PRICES, False)["total"],
        **inherited_columns(b["inherited"]),
    }


def inherited_columns(inherited: dict[str, Any] | None) -> dict[str, Any]:
    """A fork's tokens and cost that were its parent's (0 and None for a run that is no
    fork): the metrics rollup leaves them out of the fork's share."""
    if inherited is None:
        return {"inherited_tokens": 0, "inherited_cost": None}
    copied = {"agents": inherited["agents"], "lines": []}
    return {
        "inherited_tokens": inherited["tokens"],
        "inherited_cost": prices.priced(copied, settings.PRICES, False)["total"],
    }


def resume_columns(p: dict[str, Any]) -> dict[str, Any]:
    # What a person is asked, once each, conflicts first (a result stored before: nothing).
    asked = {w["what"] for w in p.get("waiting_for", [])}
    waiting_for = ", ".join(w for w in ("conflict", "dead letter") if w in asked)
    return {"stage": p["stage"], "resume_position": p["position"], "waiting_for": waiting_for}


def metrics_columns(m: dict[str, Any]) -> dict[str, Any]:
    """The coordination metrics' figures the metrics page sums (services/metrics.py): each
    rate's parts, so that a rate across runs is a ratio of sums, never a mean of ratios."""
    overhead = m["coordination_overhead_ratio"]
    latency = m["conflict_resolution_latency"]
    figures = summed(m)
    del figures["conflict_wait"]  # kept as its mean, conflict_latency, beside the count
    return {
        "verified": bool(m["coordination_cost_per_verified_success"]["verified_successes"]),
        "coord_tokens": overhead["coordination_tokens"],
        "work_tokens": overhead["work_tokens"],
        "inherited_coord_tokens": overhead.get("inherited_coordination_tokens", 0),
        "inherited_work_tokens": overhead.get("inherited_work_tokens", 0),
        "overhead_ratio": overhead["value"],
        "coord_seconds": overhead["coordination_seconds"],
        "work_seconds": overhead["work_seconds"],
        **figures,
        "conflicts_open": latency["open"],
        "conflict_latency": latency["value"],
        "letters_open": latency["open_dead_letters"],
    }


def waiting_since(metrics: folds.State) -> dict[str, Any]:
    """When the run's oldest conflict or dead letter still waiting for a person was opened,
    from the metrics fold's open items (id -> their event's time): the time the review queues
    keep as the item's (projection.at, so a journal without times reads 1970); None when none
    waits. A time stored before events' times were bounded is brought within them (instants.
    moment), where it would have stopped the run's summary."""
    opened = [*(metrics.get("parked") or {}).values(), *(metrics.get("letters") or {}).values()]
    return {"waiting_since": min(instants.moment(t) for t in opened) if opened else None}


def copied_figures(metrics: folds.State) -> dict[str, Any]:
    """What a fork's copied prefix held of each figure the sums add up (runtime.metric_sums.SUMMED;
    empty for a run that is no fork, or a state stored before the fold kept it): the metrics
    rollup leaves it out of the fork's share, as it does the copied tokens."""
    return {"copied_figures": metrics.get("copied") or {}}


def lineage(metrics: folds.State) -> dict[str, Any]:
    """The forks a fork of a fork descends through, oldest first, each with the run it was
    forked from and what its copied prefix held (tokens, coordination and work tokens, and the
    figures of `copied_figures`), from the earlier RunForked events its journal copied: the
    sums across runs count that past once even when such a fork is not in this store
    (services/shared_past.py). [] for a run that is no fork of a fork."""
    forks = metrics.get("forks") or []
    coordinating = set(metric_values.coordinating(metrics)) if forks else set()
    found = []
    for fork, child in pairwise(forks):
        tokens = fork["inherited"]
        coord = sum(n for name, n in tokens.items() if name in coordinating)
        found.append(
            {
                "run": child["parent"],
                "parent": fork["parent"],
                "tokens": sum(tokens.values()),
                "coord_tokens": coord,
                "work_tokens": sum(tokens.values()) - coord,
                "figures": fork["copied"],
            }
        )
    return {"lineage": found}


def lineage_cost(bill: folds.State) -> dict[str, Any]:
    """What each fork of `lineage` copied cost, priced as the fork's own copied prefix is
    (None: not known), by run."""
    return {
        "lineage_cost": {
            run: inherited_columns(copied)["inherited_cost"]
            for run, _, copied in ancestors_of(bill)
        }
    }


def run_model(bill: folds.State) -> dict[str, Any]:
    """The model the run asked, from the bill's state (its TeamStarted): the default backend,
    or the endpoint's model name; "" when the journal does not say."""
    return {"model": (model_for(bill.get("models") or {}, "") or "")[:100]}


COLUMNS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "summary": summary_columns,
    "bill": bill_columns,
    "resume_point": resume_columns,
    "metrics": metrics_columns,
}
# Columns read from a fold's state where its result does not hold them.
STATE_COLUMNS: dict[str, Callable[[folds.State], dict[str, Any]]] = {
    "bill": lambda state: run_model(state) | lineage_cost(state),
    "metrics": lambda state: copied_figures(state) | lineage(state) | waiting_since(state),
}
FOLDS: dict[str, Fold] = {f.name: f for f in RUN_FOLDS}


def columns_of(fold: Fold, state: folds.State) -> dict[str, Any]:
    columns = COLUMNS[fold.name](fold.result(state, folds.Rows()))
    from_state = STATE_COLUMNS.get(fold.name)
    return columns if from_state is None else columns | from_state(state)
