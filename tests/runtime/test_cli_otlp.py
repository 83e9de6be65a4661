"""`python -m runtime otlp JOURNAL`: a run's trace from its journal file, as OTLP/JSON on
standard output or OTLP/protobuf into a file, with the project and content chosen on the line."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
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


def test_the_journal_itself_is_refused_as_the_output_and_left_as_it_was(fly_team, tmp_path):
    """`-o` naming the journal (as given, another spelling of it, or a link to it) wrote the
    trace over the run's only record and said nothing (exit 0)."""
    flown = fly_team("first-flight")
    kept = flown.path.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(flown.path)
    spelled = flown.path.parent / "." / flown.path.name
    for output in (flown.path, spelled, link):
        refused = cli(str(flown.path), "-o", str(output))
        assert refused.returncode == 2
        assert refused.stderr.decode() == (
            f"error: {output} is the journal itself: name another file\n"
        )
        assert flown.path.read_bytes() == kept
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".part")) == []


def test_an_sqlite_database_is_refused_as_the_output_and_left_as_it_was(fly_team, tmp_path):
    """`-o var/minutes.sqlite3` (or a backup) replaced Minutes' whole store with the trace."""
    import sqlite3

    flown = fly_team("first-flight")
    store = tmp_path / "minutes.sqlite3"
    with sqlite3.connect(store) as made:
        made.execute("CREATE TABLE journal_event (position INTEGER PRIMARY KEY)")
    made.close()
    kept = store.read_bytes()
    refused = cli(str(flown.path), "-o", str(store))
    assert refused.returncode == 2
    assert refused.stderr.decode() == (
        f"error: {store} is an SQLite database: a trace written there would replace it; "
        "name another file\n"
    )
    assert store.read_bytes() == kept and [p.name for p in tmp_path.iterdir()] == [store.name]
    text = tmp_path / "notes.txt"  # any other file is replaced, as before
    text.write_text("SQLite format 3 is what this note is about\n")
    assert cli(str(flown.path), "-o", str(text)).returncode == 0
    assert json.loads(text.read_text())["resourceSpans"]


def test_an_output_that_cannot_be_written_is_named_and_nothing_is_left_half_written(
    fly_team, tmp_path
):
    flown = fly_team("first-flight")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    into_folder = cli(str(flown.path), "-o", str(folder))
    assert into_folder.returncode == 2
    assert into_folder.stderr.decode() == f"error: {folder}: Is a directory\n"
    nowhere = tmp_path / "no-such-folder" / "trace.json"
    missing = cli(str(flown.path), "-o", str(nowhere))
    assert missing.returncode == 2 and b"No such file or directory" in missing.stderr
    # An existing trace file is replaced whole: before the new one is complete it stays.
    out = tmp_path / "trace.json"
    out.write_text("the last trace")
    assert cli(str(flown.path), "-o", str(out)).returncode == 0
    assert json.loads(out.read_text()) == json.loads(otlp_json(flown.records))
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []


def test_a_pipe_a_device_or_a_link_is_written_through_not_replaced(fly_team, tmp_path):
    """The output written beside and renamed into place replaced what stood there: a pipe (or
    /dev/null, as root) became a regular file, and a link became a file of its own. (Not
    tried on /dev/null: were this to break again, the test would break the machine.)"""
    flown = fly_team("first-flight")
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(pipe.read_bytes()))
    reader.start()
    assert cli(str(flown.path), "-o", str(pipe)).returncode == 0
    reader.join(30)
    assert json.loads(got[0]) == json.loads(otlp_json(flown.records))
    assert stat.S_ISFIFO(pipe.stat().st_mode)
    target, link = tmp_path / "trace.json", tmp_path / "link.json"
    target.write_text("old")
    link.symlink_to(target)
    assert cli(str(flown.path), "-o", str(link)).returncode == 0
    assert link.is_symlink() and json.loads(target.read_text())
