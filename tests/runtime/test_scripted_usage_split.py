"""A scripted model's synthetic usage is split into input and output tokens that add up to the
total it always reported: the journal records the split, bills and budgets are unchanged, and
journals written before the split still load and export (without one)."""

from __future__ import annotations

import shutil
from pathlib import Path

from runtime import flight, views
from runtime.events import BudgetDebited, ModelResponded, Usage
from runtime.jsonl import JsonlJournal
from runtime.model import ChatMessage, ScriptedClient, call, say
from runtime.otel import otlp_trace

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "journals" / "repo-fix.v1.jsonl"


def test_the_split_follows_the_window_and_the_answer_and_adds_up_to_the_total():
    window = [ChatMessage(role="user", content="x" * 900)]
    client = ScriptedClient([say("y" * 100, 200), call("run_tests", 7), say("", 0)])
    assert client.complete(window, []).usage == Usage(total=200, prompt=180, completion=20)
    tiny = client.complete(window, []).usage  # a short call still costs an output token
    assert (tiny.total, tiny.prompt + tiny.completion) == (7, 7) and tiny.completion >= 1
    assert client.complete(window, []).usage == Usage(total=0, prompt=0, completion=0)


def test_a_scripted_run_records_the_split_and_bills_the_same(fly_team):
    records = fly_team("first-flight").records
    responded = [r.event for r in records if isinstance(r.event, ModelResponded)]
    debited = [r.event for r in records if isinstance(r.event, BudgetDebited)]
    assert responded and len(responded) == len(debited)
    for answer, debit in zip(responded, debited, strict=True):
        usage = answer.usage
        assert usage.prompt is not None and usage.completion is not None
        assert usage.prompt + usage.completion == usage.total == debit.amount
        assert usage.prompt > usage.completion > 0  # a window is larger than a scripted answer
    assert views.bill(records)["total"]["tokens"] == sum(e.usage.total for e in responded)


def test_a_journal_from_before_the_split_loads_and_exports_no_split(tmp_path):
    copy = tmp_path / "old.jsonl"
    shutil.copy(FIXTURE, copy)
    records = JsonlJournal(copy).read_all()
    responded = [r.event for r in records if isinstance(r.event, ModelResponded)]
    assert responded and all(e.usage.prompt is None and e.served is None for e in responded)
    run_id = records[0].stream.removeprefix("run-")
    spans = otlp_trace(flight.run_records(JsonlJournal(copy), run_id))["resourceSpans"][0][
        "scopeSpans"
    ][0]["spans"]
    keys = {a["key"] for s in spans for a in s["attributes"]}
    assert "minutes.usage.total_tokens" in keys and "gen_ai.usage.input_tokens" not in keys
