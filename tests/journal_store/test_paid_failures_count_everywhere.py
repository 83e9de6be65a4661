"""A failed model call that was paid for (ModelFailed with usage: a reply that could not be
used, a pick before an outage) counts the same everywhere a run's tokens are told: the bill,
the coordination metrics and their rollup per day, and the trace's spans agree on the run's
total, through the projector and after a rebuild."""

from __future__ import annotations

import importlib
import json
from types import SimpleNamespace
from typing import Any

import pytest
from django.apps import apps
from django.db import connection

from journal_store import metrics_days, projection
from journal_store.journal import DjangoJournal
from journal_store.models import MetricsDay, RunState, RunSummary
from runtime import flight, loop, views
from runtime.budget import Budget
from runtime.events import ModelFailed, Usage
from runtime.model import ModelClient, ModelError, ModelResponse, call
from runtime.openai_wire import ModelProtocolError
from runtime.otel import otlp_trace
from runtime.session import Session
from runtime.tools import Toolbox
from tests.journal_store.conftest import on_every_backend
from tests.journal_store.test_projection import snapshot

RUN = "r-paid-failure"
ANSWERED = Usage(total=300, prompt=250, completion=50)
PAID = Usage(total=7_000, prompt=2_000, completion=5_000)


class AnswersThenCutOff(ModelClient):
    """A vendor that answers once (a call of a tool the agent lacks), then writes a reply cut
    off mid-call, paid for all the same."""

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, messages: Any, tools: Any) -> ModelResponse:
        self.calls += 1
        if self.calls == 1:
            answer = call("lookup", ANSWERED.total, city="Oslo")
            return answer.model_copy(update={"usage": ANSWERED})
        error = ModelProtocolError("the reply was cut off mid-call")
        error.usage = PAID
        raise error


def span_tokens(records) -> int:
    spans = otlp_trace(records)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return sum(
        int(a["value"]["intValue"])
        for s in spans
        for a in s["attributes"]
        if a["key"] == "minutes.usage.total_tokens"
    )


def failed_span(records) -> dict[str, Any]:
    spans = otlp_trace(records)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    [failed] = [s for s in spans if s["status"].get("code") == 2 and s["name"].startswith("chat")]
    return {a["key"]: a["value"] for a in failed["attributes"]}


@on_every_backend()
def test_the_bill_the_metrics_and_the_spans_agree_on_a_paid_failure(alias) -> None:
    journal = DjangoJournal(alias)
    agent = loop.Agent("coder", AnswersThenCutOff(), Toolbox([]), "sys")
    with pytest.raises(ModelError):
        loop.run(agent, "fix it", Session(journal, RUN), Budget(100_000), task_id="T1")
    records = flight.run_records(journal, RUN)
    assert [e.usage for e in (r.event for r in records) if isinstance(e, ModelFailed)] == [PAID]
    total = ANSWERED.total + PAID.total

    bill = views.bill(records)
    assert bill["total"]["tokens"] == total and bill["balanced"]
    overhead = views.metrics(records)["coordination_overhead_ratio"]
    assert overhead["coordination_tokens"] + overhead["work_tokens"] == total
    assert span_tokens(records) == total
    attributes = failed_span(records)
    assert attributes["minutes.usage.total_tokens"] == {"intValue": str(PAID.total)}
    assert attributes["gen_ai.usage.output_tokens"] == {"intValue": str(PAID.completion)}

    projection.catch_up(using=alias)
    run = RunSummary.objects.using(alias).get(run_id=RUN)
    assert run.tokens == run.coord_tokens + run.work_tokens == total
    [day] = MetricsDay.objects.using(alias).all()
    assert day.tokens == day.coord_tokens + day.work_tokens == total
    incremental = snapshot(alias)
    rolled = list(MetricsDay.objects.using(alias).values(*metrics_days.SUMS))
    projection.rebuild(using=alias)
    assert snapshot(alias) == incremental
    assert list(MetricsDay.objects.using(alias).values(*metrics_days.SUMS)) == rolled


MIGRATION = importlib.import_module("journal_store.migrations.0039_paid_failures_in_metrics")
COLUMNS = ("run_id", "tokens", "coord_tokens", "work_tokens", "overhead_ratio")
FIELDS = (*metrics_days.KEY, *metrics_days.SUMS)


@pytest.mark.django_db(transaction=True)
def test_the_migration_counts_the_paid_failures_of_runs_projected_before_it() -> None:
    journal = DjangoJournal("default")
    agent = loop.Agent("coder", AnswersThenCutOff(), Toolbox([]), "sys")
    with pytest.raises(ModelError):
        loop.run(agent, "fix it", Session(journal, RUN), Budget(100_000), task_id="T1")
    projection.catch_up()
    projected = list(RunSummary.objects.values(*COLUMNS))
    rolled = sorted(MetricsDay.objects.values_list(*FIELDS))
    assert projected[0]["coord_tokens"] + projected[0]["work_tokens"] == projected[0]["tokens"]

    # As the fold left it before: the paid failure's tokens on nobody's row.
    stored = RunState.objects.get(run_id=RUN, fold="metrics")
    state = json.loads(stored.state)
    state["agents"]["coder"][0] -= PAID.total
    RunState.objects.filter(pk=stored.pk).update(state=json.dumps(state))
    RunSummary.objects.filter(run_id=RUN).update(work_tokens=ANSWERED.total)
    metrics_days.refill(RunSummary.objects, MetricsDay.objects)
    assert sorted(MetricsDay.objects.values_list(*FIELDS)) != rolled

    MIGRATION.fill(apps, SimpleNamespace(connection=connection))
    assert list(RunSummary.objects.values(*COLUMNS)) == projected
    assert sorted(MetricsDay.objects.values_list(*FIELDS)) == rolled
    projection.rebuild()
    assert list(RunSummary.objects.values(*COLUMNS)) == projected
    assert sorted(MetricsDay.objects.values_list(*FIELDS)) == rolled
