"""Who started a run, on the OTLP trace's run span: a person's name, shipped with or without
content like the waits' deciders and a fork's author, scrubbed and bounded as they are; a run
nobody started (a reference journal, a command line) names nobody."""

from __future__ import annotations

from typing import Any

import pytest

from runtime import streams
from runtime.events import TeamFinished, TeamStarted
from runtime.journal import MemoryJournal, Recorded
from runtime.otel import TraceOptions, otlp_json, otlp_trace

RUN = "r-started"
T0 = 1_796_000_000.0
SECRET = "sk-" + "c" * 30


def records(started_by: Any) -> list[Recorded]:
    j = MemoryJournal()
    config = {} if started_by is None else {"started_by": started_by}
    events = [
        TeamStarted(id="e1", t=T0, run_id=RUN, team="solo", scenario="s", task="t", config=config),
        TeamFinished(id="e2", t=T0 + 1, run_id=RUN, status="done"),
    ]
    j.append(streams.journal(RUN), events, 0)
    return j.read_all()


def started_by(records: list[Recorded], options: TraceOptions) -> Any:
    [root] = otlp_trace(records, options)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    found = {a["key"]: next(iter(a["value"].values())) for a in root["attributes"]}
    return found.get("minutes.started_by")


@pytest.mark.parametrize("content", [True, False])
def test_the_starter_s_name_is_scrubbed_and_bounded_with_or_without_content(content):
    options = TraceOptions(content=content, content_chars=40)
    named = records(f"rosa {SECRET} " + "x" * 60)
    assert SECRET not in otlp_json(named, options)
    shipped = started_by(named, options)
    assert shipped.startswith("rosa [REDACTED] xxx") and shipped.endswith("characters cut]")
    assert started_by(records("rosa"), options) == "rosa"


def test_a_run_nobody_started_names_nobody():
    assert started_by(records(None), TraceOptions()) is None
