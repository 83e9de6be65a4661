"""What a person gives a fork's agents (a message, a replacement tool result) holds no control
character but tabs and line breaks, nor half a UTF-16 pair: the command line refused none of
them (a NUL typed as JSON's "\\u0000", an escape sequence for a terminal) and journalled them,
where the API refused a NUL. One check in runtime/ (fork_checks), asked by every door."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from runtime import fork_checks
from runtime.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("mind \x1b[2J the screen", "holds a control character (U+001B) at character 6"),
        ("a\x00b", "holds a NUL character (U+0000) at character 2"),
        ("bell\x07", "holds a control character (U+0007) at character 5"),
        ("C1 \x85", "holds a control character (U+0085) at character 4"),
        ("\udcff", "holds half a UTF-16 surrogate pair (U+DCFF alone) at character 1"),
        ("x" * 8_001, "say something, in at most 8,000 characters"),
    ],
)
def test_a_message_an_agent_cannot_be_given_is_named(text, says):
    assert says in (fork_checks.message_refusal(text) or "")


def test_tabs_and_line_breaks_are_words_enough():
    assert fork_checks.message_refusal("one\ttwo\r\nthree\n") is None
    assert fork_checks.result_refusal({"out": "a\tb\r\nc", "lines": ["d\n"]}) is None


def test_a_tool_result_names_where_it_holds_what_it_may_not():
    found = fork_checks.result_refusal({"ok": 1, "out": ["fine", "bad\x1b"]})
    assert found == (
        'holds a control character (U+001B) at ["out"][1], character 4; '
        "tabs and line breaks are the only ones text here may hold"
    )
    found = fork_checks.result_refusal({"k\x00": 1})
    assert found == 'holds a NUL character (U+0000) at the key ["k\\u0000"], character 2, ' + (
        "which no text here may hold"
    )


@pytest.fixture
def copied(fly_team, tmp_path):
    flown = fly_team("first-flight")
    path = tmp_path / "j.jsonl"
    shutil.copy(flown.path, path)
    at = next(r.position for r in flown.records if r.event.kind == "ToolReturned")
    return path, at, flown.path.parent


@pytest.mark.slow
@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--say", "coder=clear \x1b[2J", "--say: holds a control character (U+001B)"),
        ("--tool-result", '"\\u0000"', "--tool-result: holds a NUL character (U+0000)"),
        ("--tool-result", '{"out": ["\\u001b]8;;x"]}', "--tool-result: holds a control char"),
        ("--tool-result", '{"\\ud800": 1}', "--tool-result: holds half a UTF-16 surrogate"),
    ],
)
def test_the_command_line_refuses_it_and_writes_nothing(copied, capsys, option, value, says):
    path, at, root = copied
    before, made = path.read_bytes(), sorted(root.iterdir())
    args = ["fork", str(path), "--at", str(at), "--workspaces", str(root), option, value]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {says}"), err
    assert path.read_bytes() == before
    assert sorted(root.iterdir()) == made  # no workspace restored for it


@pytest.mark.slow
def test_an_argument_that_is_not_utf8_is_refused_by_the_command(copied):
    """Bytes that are no UTF-8 reach Python as half pairs (surrogateescape): said, not kept."""
    path, at, root = copied
    before = path.read_bytes()
    argv = [sys.executable, "-m", "runtime", "fork", str(path), "--at", str(at)]
    argv += ["--workspaces", str(root), "--say", os.fsencode("coder=caf") + b"\xe9"]
    done = subprocess.run(
        argv, cwd=ROOT, capture_output=True, env={**os.environ, "PYTHONPATH": str(ROOT)}
    )
    assert done.returncode == 2, done.stderr
    assert b"--say: holds half a UTF-16 surrogate pair (U+DCE9 alone) at character 4" in (
        done.stderr
    )
    assert path.read_bytes() == before
