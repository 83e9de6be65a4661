"""A person's stop and resume in the OTLP trace: events on the run's span naming who, scrubbed
and bounded like the waits' deciders; the reason a person typed is content, left out of the
events and of the stopped agents' status messages when a deployment turns content off, in
every encoding and from the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from runtime import flat, streams
from runtime.events import (
    AgentFinished,
    Event,
    ModelCalled,
    ModelResponded,
    RunInterrupted,
    RunResumed,
    RunStarted,
    TeamFinished,
    TeamStarted,
    Usage,
)
from runtime.journal import MemoryJournal, Recorded
from runtime.otel import TraceOptions, otlp_json, otlp_protobuf, otlp_trace

ROOT = Path(__file__).resolve().parents[2]
RUN = "r-stopped"
T0 = 1_796_000_000.0
SECRET = "sk-" + "b" * 30
REASON = f"the refund is for Mrs Jones of 12 Elm Street, key {SECRET}"
OFF = TraceOptions(content=False)


def event(cls: type[Event], at: float, **fields: Any) -> Any:
    return cls(id=f"{cls.kind}-{at}", t=T0 + at, run_id=RUN, **fields)


def records(resumed: bool) -> list[Recorded]:
    """A run a person stopped with a reason (and, if `resumed`, that another resumed to its
    end); without the resume the journal ends at the stop, the clerk's run open."""
    j = MemoryJournal()
    usage = Usage(total=10)
    events = [
        event(TeamStarted, 0, team="support-desk", scenario="s", task="refund T-1"),
        event(RunStarted, 1, agent="clerk", task="refund T-1"),
        event(ModelCalled, 2, agent="clerk", turn=1),
        event(ModelResponded, 3, agent="clerk", turn=1, text="", tool_calls=[], usage=usage),
        event(RunInterrupted, 4, by="alice", reason=REASON),
    ]
    if resumed:
        events += [
            event(RunResumed, 9, by="bob", reason="checked with the customer"),
            event(AgentFinished, 10, agent="clerk"),
            event(TeamFinished, 11, status="done"),
        ]
    j.append(streams.journal(RUN), events, 0)
    return j.read_all()


def spans_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return list(doc["resourceSpans"][0]["scopeSpans"][0]["spans"])


def attrs(item: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in item["attributes"]}


def run_events(records: list[Recorded], options: TraceOptions) -> dict[str, dict[str, Any]]:
    [root] = [s for s in spans_of(otlp_trace(records, options)) if "parentSpanId" not in s]
    return {e["name"]: attrs(e) for e in root["events"]}


def test_without_content_the_events_name_who_and_not_why():
    both = run_events(records(resumed=True), OFF)
    assert both == {
        "minutes.interrupted": {"minutes.by": "alice"},
        "minutes.resumed": {"minutes.by": "bob"},
    }


def test_with_content_the_reasons_are_scrubbed_and_bounded():
    events = run_events(records(resumed=True), TraceOptions(content_chars=40))
    stopped = events["minutes.interrupted"]
    assert stopped["minutes.by"] == "alice"
    assert stopped["minutes.reason"].startswith(REASON[:40] + "… [")  # cut, and says so
    assert SECRET not in json.dumps(events)
    assert events["minutes.resumed"]["minutes.reason"] == "checked with the customer"


def test_an_agent_the_stop_left_open_says_who_stopped_it_and_why_only_with_content():
    cut = records(resumed=False)
    [clerk] = [s for s in spans_of(otlp_trace(cut, OFF)) if s["name"] == "invoke_agent clerk"]
    assert clerk["status"]["message"] == "the run was interrupted by alice"
    [clerk] = [s for s in spans_of(otlp_trace(cut)) if s["name"] == "invoke_agent clerk"]
    assert clerk["status"]["message"].startswith("the run was interrupted by alice: the refund")
    assert SECRET not in clerk["status"]["message"]


def test_no_encoding_and_no_way_out_carries_the_reason_without_content(tmp_path):
    for resumed in (False, True):
        recs = records(resumed)
        assert "Elm Street" not in otlp_json(recs, OFF)
        assert b"Elm Street" not in otlp_protobuf(recs, OFF)
        assert "Elm Street" in otlp_json(recs)  # the journal holds it: content carries it
        path = tmp_path / f"{resumed}.jsonl"
        path.write_text("".join(flat.dumps(r.event, r.stream, r.version) + "\n" for r in recs))
        printed = subprocess.run(
            [sys.executable, "-m", "runtime", "otlp", str(path), "--no-content"],
            capture_output=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            cwd=ROOT,
        )
        assert printed.returncode == 0, printed.stderr
        assert printed.stdout.decode() == otlp_json(recs, OFF) + "\n"
