"""A journal the reference runtime wrote exports with its own times: its journal.py writes
`{"v": 1, "t": <seconds>, "kind": ..., ...}`, and `t` is the field the trace reads. The abridged
lines the reference runtime's text prints carry no `t` at all: such a journal records no times,
and `python -m runtime otlp` says so instead of placing every span at 0 (1 January 1970)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from runtime.events import BudgetDebited
from runtime.journal import MemoryJournal
from runtime.jsonl import JsonlJournal
from runtime.otel import UNTIMED, nanos, untimed

ROOT = Path(__file__).resolve().parents[2]
T0 = 1_796_063_421.4960866

# The reference runtime's first agent, as its journal.py appends it: a version, a time and a
# kind on every line, no ids, no streams.
LINES = [
    {"kind": "RunStarted", "agent": "coder", "task": "Make the failing parser test pass."},
    {"kind": "ModelCalled", "agent": "coder", "turn": 0},
    {"kind": "ModelResponded", "agent": "coder", "usage": 120},
    {"kind": "BudgetDebited", "agent": "coder", "amount": 120},
    {"kind": "ToolDispatched", "agent": "coder", "tool": "run_tests"},
    {"kind": "ToolReturned", "agent": "coder", "tool": "run_tests", "result": {"passed": 2}},
    {"kind": "AgentFinished", "agent": "coder"},
]
SECONDS = [0.0, 0.25, 1.5, 1.5001, 1.75, 4.0, 4.5]


def write(path: Path, timed: bool) -> Path:
    rows = [
        {"v": 1, "t": T0 + at, **line} if timed else line
        for line, at in zip(LINES, SECONDS, strict=True)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def cli(*argv: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "runtime", "otlp", *argv], capture_output=True, env=env, cwd=ROOT
    )


def at(i: int) -> int:
    return nanos(T0 + SECONDS[i])


def test_a_reference_runtime_journal_exports_with_the_times_its_lines_carry(tmp_path):
    printed = cli(str(write(tmp_path / "ref.jsonl", timed=True)))
    assert printed.returncode == 0, printed.stderr
    spans = json.loads(printed.stdout)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    found = {s["name"]: (int(s["startTimeUnixNano"]), int(s["endTimeUnixNano"])) for s in spans}
    assert found == {
        "chat model": (at(1), at(2)),
        "execute_tool run_tests": (at(4), at(5)),
        "invoke_agent coder": (at(0), at(6)),
        "invoke_agent": (at(0), at(6)),
    }
    assert all(start > 0 and end > 0 for start, end in found.values())


def test_a_journal_that_records_no_times_is_said_so_not_exported_at_1970(tmp_path):
    path = write(tmp_path / "abridged.jsonl", timed=False)
    assert untimed(JsonlJournal(path).read("run-imported"))
    out = tmp_path / "trace.json"
    refused = cli(str(path), "-o", str(out))
    assert refused.returncode == 2
    assert f"error: {UNTIMED}" in refused.stderr.decode()
    assert "records no times" in refused.stderr.decode()
    assert refused.stdout == b"" and not out.exists()


def test_a_journal_with_a_time_anywhere_is_timed_and_no_journal_is_not_untimed():
    j = MemoryJournal()
    j.append("run-r", [BudgetDebited(t=0.0, amount=1), BudgetDebited(t=T0, amount=1)], 0)
    records = j.read("run-r")
    assert not untimed(records) and untimed(records[:1])
    assert not untimed([])
