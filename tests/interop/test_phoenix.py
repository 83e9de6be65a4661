"""A real consumer reads our traces as first-class: an Arize Phoenix server (its own virtualenv,
var/phoenix, installed by .ci/run), on loopback, is pushed a first flight and a broken-policy run
by Minutes' own push, and its REST API shows what the journal says: every span, their kinds,
the tokens of the bill per agent, the model, inputs and outputs, the run as a session, and the
failed specialist and the DEGRADED answer as errors.

Skipped where Phoenix is not installed (`var/phoenix/bin/python -m pip install arize-phoenix`);
under CI, where .ci/run installs it, its absence fails the test.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from runtime import flight, views
from runtime.jsonl import JsonlJournal
from runtime.otel import TraceOptions, otlp_protobuf, otlp_trace
from runtime.otel.push import push

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PHOENIX = ROOT / "var" / "phoenix" / "bin" / "python"
PROJECT = "minutes-interop"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory):
    if not PHOENIX.exists():
        if os.environ.get("CI"):
            pytest.fail(f"Arize Phoenix should have been installed by .ci/run at {PHOENIX}")
        pytest.skip(f"Arize Phoenix is not installed here ({PHOENIX})")
    work = tmp_path_factory.mktemp("phoenix")
    port, grpc = free_port(), free_port()
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(work),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (work / "phoenix.log").open("w")
    server = subprocess.Popen(
        [str(PHOENIX), str(Path(__file__).with_name("phoenix_loopback.py"))],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{url}/healthz", timeout=2).close()
                break
            except (urllib.error.URLError, OSError):
                if server.poll() is not None:
                    pytest.fail(f"Phoenix exited: {(work / 'phoenix.log').read_text()[-2000:]}")
                time.sleep(0.5)
        else:
            pytest.fail("Phoenix did not answer within 120 s")
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


def spans_of(url: str, run_id: str, expected: int) -> list[dict[str, Any]]:
    """The run's spans as Phoenix stored them (it ingests asynchronously: wait for all)."""
    found: list[dict[str, Any]] = []
    for _ in range(120):
        try:
            stored = get(f"{url}/v1/projects/{PROJECT}/spans?limit=1000")["data"]
        except urllib.error.HTTPError as error:
            if error.code != 404:  # the project appears with its first span
                raise
            stored = []
        found = [s for s in stored if s["attributes"].get("gen_ai.conversation.id") == run_id]
        if len(found) >= expected:
            return found
        time.sleep(0.5)
    raise AssertionError(f"Phoenix holds {len(found)} of the run's {expected} spans")


def pushed(url: str, flown) -> tuple[list[dict[str, Any]], list[Any]]:
    records = flight.run_records(JsonlJournal(flown.path), flown.run_id)
    options = TraceOptions(project=PROJECT)
    assert push(otlp_protobuf(records, options), url).status == 200
    ours = otlp_trace(records, options)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return spans_of(url, flown.run_id, len(ours)), records


def check_run(spans: list[dict[str, Any]], records: list[Any]) -> None:
    ops = Counter(s["attributes"]["gen_ai.operation.name"] for s in spans)
    kinds = Counter(s["span_kind"] for s in spans)
    assert kinds["LLM"] == ops["chat"] > 0
    assert kinds["TOOL"] == ops["execute_tool"] > 0
    assert kinds["AGENT"] == ops["invoke_agent"] > 1  # the run and its agents
    bill = views.bill(records)["agents"]
    per_agent: Counter[str] = Counter()
    for span in spans:
        a = span["attributes"]
        if span["span_kind"] == "LLM":
            assert a["llm.token_count.total"] == a["minutes.usage.total_tokens"]
            split = a["llm.token_count.prompt"] + a["llm.token_count.completion"]
            assert split == a["llm.token_count.total"]
            per_agent[a["gen_ai.agent.name"]] += a["llm.token_count.total"]
            assert a["llm.model_name"] == "scripted"
            assert a["llm.input_messages.0.message.content"]
            assert any(k.startswith("llm.output_messages.0.") for k in a)
        elif span["span_kind"] == "AGENT":
            assert a["input.value"] and a["output.value"], span["name"]
    assert per_agent == {agent: row["tokens"] for agent, row in bill.items()}


def test_phoenix_reads_a_first_flight_as_a_session_with_the_bill(phoenix, fly_team):
    flown = fly_team("first-flight")
    spans, records = pushed(phoenix, flown)
    check_run(spans, records)
    assert {s["status_code"] for s in spans} == {"UNSET"}
    session = get(f"{phoenix}/v1/sessions/{flown.run_id}")["data"]
    assert session["session_id"] == flown.run_id
    assert [t["trace_id"] for t in session["traces"]] == [spans[0]["context"]["trace_id"]]
    bill = views.bill(records)["total"]["tokens"]
    assert session["token_count_total"] == bill
    assert session["token_count_prompt"] + session["token_count_completion"] == bill


def test_phoenix_marks_the_failed_specialist_and_the_degraded_answer(phoenix, fly_team):
    flown = fly_team("broken-policy", team="support-triage")
    spans, records = pushed(phoenix, flown)
    check_run(spans, records)
    errors = {s["name"]: s for s in spans if s["status_code"] == "ERROR"}
    assert "invoke_agent policy-worker" in errors
    assert errors["invoke_agent policy-worker"]["status_message"].startswith(
        "the agent reported failure"
    )
    [root] = [s for s in spans if s["parent_id"] is None]
    assert root["status_code"] == "ERROR" and "DEGRADED" in root["status_message"]
    assert not any(n.startswith("invoke_agent orders-worker") for n in errors)
