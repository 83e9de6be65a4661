"""A fork's OTLP trace says where it came from: its run span names the parent run and the fork
point, and links to the parent's run span (whose ids follow from the parent's run id). What a
person changed is content: a message they typed is left out when content is off; which kinds
of change were made stays. A fork of a fork names its own parent, not its grandparent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from runtime import flight, fork, streams
from runtime.jsonl import JsonlJournal
from runtime.otel import TraceOptions, otlp_json, otlp_protobuf, otlp_request, otlp_trace
from runtime.otel.fold_state import LiveFold, dump, load

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-" + "c" * 30
MESSAGE = f"Mind the empty line at the end of the file; the key is {SECRET}"
OFF = TraceOptions(content=False)


@pytest.fixture
def family(fly_team, tmp_path) -> tuple[JsonlJournal, str, int]:
    """A first flight's journal, copied, with a fork of it (r-child, a message for the coder
    after the coder's first read) and a fork of that fork (r-grandchild, no changes)."""
    flown = fly_team("first-flight")
    path = tmp_path / "j.jsonl"
    shutil.copy(flown.path, path)
    journal = JsonlJournal(path)
    parent = flown.run_id
    at = next(
        r.position
        for r in journal.read(streams.journal(parent))
        if r.event.kind == "ToolReturned" and r.event.tool == "read_file"
    )
    changes = fork.Changes(message=("coder", MESSAGE))
    planned = fork.plan(fork.records_of(journal, parent), parent, "r-child", at, changes, "ana")
    fork.write(journal, planned)
    last = journal.read(streams.journal("r-child"))[-1].position
    again = fork.plan(
        fork.records_of(journal, "r-child"), "r-child", "r-grandchild", last, fork.Changes(), "bo"
    )
    fork.write(journal, again)
    return journal, parent, at


def spans_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return list(doc["resourceSpans"][0]["scopeSpans"][0]["spans"])


def attrs(item: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for a in item["attributes"]:
        [(kind, value)] = a["value"].items()
        if kind == "arrayValue":
            value = [next(iter(v.values())) for v in value["values"]]
        out[a["key"]] = int(value) if kind == "intValue" else value
    return out


def root_of(journal: JsonlJournal, run_id: str, options: TraceOptions | None = None) -> dict:
    spans = spans_of(otlp_trace(flight.traced_records(journal, run_id), options))
    [root] = [s for s in spans if "parentSpanId" not in s]
    return root


def test_a_fork_s_run_span_names_its_parent_and_links_to_the_parent_s_run_span(family):
    journal, parent, at = family
    theirs = root_of(journal, parent)
    mine = root_of(journal, "r-child")
    assert mine["traceId"] != theirs["traceId"]
    [link] = mine["links"]
    assert (link["traceId"], link["spanId"]) == (theirs["traceId"], theirs["spanId"])
    assert attrs(link) == {"minutes.link": "forked from"}
    a = attrs(mine)
    assert (a["minutes.fork.parent_run_id"], a["minutes.fork.at"]) == (parent, at)
    number = [r.position for r in journal.read(streams.journal(parent))].index(at) + 1
    assert (a["minutes.fork.number"], a["minutes.fork.by"]) == (number, "ana")
    assert a["minutes.fork.changed"] == ["message"]
    changes = json.loads(a["minutes.fork.changes"])  # content: scrubbed
    assert changes["message"]["text"].startswith("Mind the empty line")
    assert SECRET not in a["minutes.fork.changes"]
    assert "links" not in theirs  # the parent is no fork


def test_without_content_the_fork_keeps_its_lineage_and_leaves_out_what_a_person_typed(family):
    journal, parent, _ = family
    records = flight.traced_records(journal, "r-child")
    assert "empty line" not in otlp_json(records, OFF)
    assert b"empty line" not in otlp_protobuf(records, OFF)
    mine = root_of(journal, "r-child", OFF)
    a = attrs(mine)
    assert "minutes.fork.changes" not in a
    assert (a["minutes.fork.parent_run_id"], a["minutes.fork.changed"]) == (parent, ["message"])
    assert mine["links"][0]["spanId"] == root_of(journal, parent, OFF)["spanId"]


def test_a_fork_of_a_fork_names_and_links_its_own_parent(family):
    journal, _, _ = family
    mine = root_of(journal, "r-grandchild")
    a = attrs(mine)
    assert (a["minutes.fork.parent_run_id"], a["minutes.fork.by"]) == ("r-child", "bo")
    # The grandparent's fork (copied) made changes; this one made none.
    assert "minutes.fork.changed" not in a and "minutes.fork.changes" not in a
    [link] = mine["links"]
    assert link["spanId"] == root_of(journal, "r-child")["spanId"]


def test_the_link_is_the_same_in_every_encoding_and_from_the_command_line(family, tmp_path):
    journal, parent, _ = family
    records = flight.traced_records(journal, "r-child")
    assert json.loads(otlp_json(records)) == otlp_trace(records)
    body = otlp_protobuf(records)
    assert body == otlp_request(records).SerializeToString(deterministic=True)
    parsed = ExportTraceServiceRequest.FromString(body)
    [root] = [s for s in parsed.resource_spans[-1].scope_spans[0].spans if not s.parent_span_id]
    [link] = root.links
    theirs = root_of(journal, parent)
    assert (link.trace_id.hex(), link.span_id.hex()) == (theirs["traceId"], theirs["spanId"])
    assert link.attributes[0].value.string_value == "forked from"
    printed = subprocess.run(
        [sys.executable, "-m", "runtime", "otlp", str(journal.path), "--run", "r-child"],
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
    )
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.decode() == otlp_json(records) + "\n"


def test_a_live_fold_stored_after_the_fork_keeps_the_link(family):
    journal, _, _ = family
    fold = LiveFold.start("r-child", TraceOptions())
    fold.step(flight.traced_records(journal, "r-child"))
    root = fold.trace.root
    assert root is not None and root.links
    again = load(dump(fold.trace), "r-child", TraceOptions())
    assert again.root == root
