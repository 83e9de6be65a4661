"""`python -m runtime otlp JOURNAL`: a run's trace from its journal file, as OTLP/JSON on
standard output or OTLP/protobuf into a file, with the project and content chosen on the line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from runtime.otel import TraceOptions, otlp_json, otlp_protobuf

ROOT = Path(__file__).resolve().parents[2]


def cli(*argv: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "runtime", "otlp", *argv], capture_output=True, env=env, cwd=ROOT
    )


def test_json_on_standard_output_and_protobuf_into_a_file(fly_team, tmp_path):
    flown = fly_team("first-flight")
    printed = cli(str(flown.path))
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.decode() == otlp_json(flown.records) + "\n"

    out = tmp_path / "trace.pb"
    written = cli(str(flown.path), "--protobuf", "-o", str(out), "--project", "nightly")
    assert written.returncode == 0 and written.stdout == b""
    body = out.read_bytes()
    assert body == otlp_protobuf(flown.records, TraceOptions(project="nightly"))
    [resource] = ExportTraceServiceRequest.FromString(body).resource_spans
    assert resource.resource.attributes[0].value.string_value == "nightly"


def test_content_can_be_left_out_and_bad_options_are_refused(fly_team, tmp_path):
    flown = fly_team("first-flight")
    bare = cli(str(flown.path), "--no-content")
    assert bare.returncode == 0
    assert "gen_ai.input.messages" not in bare.stdout.decode()
    assert json.loads(bare.stdout) == json.loads(
        otlp_json(flown.records, TraceOptions(content=False))
    )

    blank = cli(str(flown.path), "--project", " ", "-o", str(tmp_path / "never.json"))
    assert blank.returncode == 2 and b"project name is blank" in blank.stderr
    missing = cli(str(tmp_path / "nope.jsonl"), "-o", str(tmp_path / "never.json"))
    assert missing.returncode == 2
    assert not (tmp_path / "never.json").exists()
