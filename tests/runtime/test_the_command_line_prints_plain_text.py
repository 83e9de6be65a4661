"""What the command line prints is plain text: a model's escape sequences quoted in a run's
reason are shown as escapes, never obeyed by the terminal (runtime/terminal.py)."""

from __future__ import annotations

import io

from runtime import cli, terminal
from tests.fakellm import Reply

HOSTILE = (
    b"not json \x1b[2J\x1b]0;PWNED-TITLE\x07\x1b]8;;http://evil.example/\x07click me"
    b"\x1b]8;;\x07 \x1b[41mRED\r\xe2\x80\xaeevil"
)


def test_a_reply_full_of_escape_sequences_is_printed_as_escapes(
    server, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("MINUTES_MODEL_BASE_URL", server.url)
    monkeypatch.setenv("MINUTES_MODEL", "some-model")
    server.queue(*[Reply(HOSTILE, 200, {"Content-Type": "application/json"})] * 5)
    fly = ["fly", "--team", "solo", "--model", "endpoint", "--no-sandbox"]

    code = cli.main([*fly, "--journal", str(tmp_path / "j.jsonl"), "--run-id", "r-esc"])

    said = capsys.readouterr()
    assert code == cli.EXIT_VERDICT, said
    assert "the reply is not JSON" in said.out  # the reason, quoting the reply
    printed = said.out + said.err
    assert "\x1b" not in printed and "\x07" not in printed and "\r" not in printed
    assert "\u202e" not in printed
    assert "\\x1b]0;PWNED-TITLE\\x07" in printed


def test_plain_keeps_newlines_and_tabs_and_escapes_the_rest():
    assert terminal.plain("a\tb\nc") == "a\tb\nc"
    assert terminal.plain("\x00\x1b\x7f\x9b\u202e\u2066é") == "\\x00\\x1b\\x7f\\x9b\\u202e\\u2066é"


def test_the_plain_stream_writes_through_to_its_stream():
    inner = io.StringIO()
    stream = terminal.Plain(inner)
    print("ok \x1b[31m", file=stream)  # type: ignore[call-overload]
    stream.writelines(["x\x07", "y\n"])
    assert inner.getvalue() == "ok \\x1b[31m\nx\\x07y\n"
    assert stream.getvalue() == inner.getvalue()  # the rest is the stream's own
