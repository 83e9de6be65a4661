"""A tool call's name is the protocol's letters, digits, _ and - (and the dot of our namespaced
tools); any other is no tool's. Such a call is kept under its name escaped, refused back to the
model as a call to no tool, and nothing recorded of it holds the name's control characters: a
name of terminal controls called five times was journalled raw, and quoted raw in the run's
findings (the command line now escapes what it prints; a page or an export did not)."""

from __future__ import annotations

import pytest

from runtime import cli
from runtime.events import ToolDispatched, ToolReturned
from runtime.jsonl import JsonlJournal
from runtime.model import UNREADABLE_ARGS, ChatMessage
from runtime.openai_client import OpenAIClient
from runtime.openai_wire import parse_message, parse_tool_call, snippet
from tests.fakellm import Reply, completion, wire_call

EVIL = "\x1b]0;TITLE\x07\x1b[2Jevil"
CONTROLS = [chr(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))]


def raw_call(name: str) -> dict:
    return {"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}


@pytest.mark.parametrize(
    "name", ["list_files", "orders.lookup_order", "orders__lookup_order", "a-b", "x" * 128]
)
def test_the_names_tools_have_are_read_as_they_are(name: str) -> None:
    assert parse_tool_call(raw_call(name), 0).name == name


@pytest.mark.parametrize("name", [EVIL, "read file", "list_files\n", "x" * 129, "ünï"])
def test_any_other_name_is_kept_escaped_as_a_call_to_no_tool(name: str) -> None:
    kept = parse_tool_call(raw_call(name), 0, keep_unreadable=True)

    assert list(kept.args) == [UNREADABLE_ARGS]
    assert not any(c in kept.name for c in CONTROLS)
    assert len(kept.name) <= 83


def test_the_evil_name_is_kept_as_its_escape() -> None:
    _, [kept] = parse_message(
        {"choices": [{"message": {"tool_calls": [raw_call(EVIL)]}}]}, keep_unreadable=True
    )
    assert kept.name == "\\x1b]0;TITLE\\x07\\x1b[2Jevil"


def test_a_snippet_escapes_control_characters() -> None:
    """A snippet quotes a body that is not JSON in a reason the journal keeps (a page shows it
    too), not only on the command line, which escapes what it prints itself."""
    said = snippet("<html>\x1b]0;TITLE\x07\x1b[2J\x9b31m\x7f\r\nbody\u202e</html>".encode())
    assert not any(c in said for c in CONTROLS)
    assert said == "<html>\\x1b]0;TITLE\\x07\\x1b[2J\\x9b31m\\x7f body\\u202e</html>"


def test_the_call_goes_back_refused_and_the_findings_print_no_controls(
    server, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("MINUTES_MODEL_BASE_URL", server.url)
    monkeypatch.setenv("MINUTES_MODEL", "some-model")
    server.queue(
        *[Reply(completion(None, [wire_call(EVIL, "{}", f"c{i}")])) for i in range(5)],
        Reply(completion(None, [wire_call("done", '{"summary": "x"}', "c9")])),
    )
    path = tmp_path / "j.jsonl"
    fly = ["fly", "--team", "solo", "--model", "endpoint", "--no-sandbox", "--journal", str(path)]

    cli.main([*fly, "--run-id", "r-name"])

    printed = capsys.readouterr()
    assert not any(c in printed.out + printed.err for c in set(CONTROLS) - {"\n"})
    assert "\\x1b]0;TITLE\\x07\\x1b[2Jevil" in printed.out  # the finding names it, escaped
    told = [m for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert "there is no tool named" in told[0]["content"] and "TITLE" in told[0]["content"]
    events = [r.event for r in JsonlJournal(path).read("run-r-name")]
    dispatched = [e for e in events if isinstance(e, ToolDispatched)]
    assert {e.tool for e in dispatched} == {"\\x1b]0;TITLE\\x07\\x1b[2Jevil"}
    assert all(e.error is not None for e in events if isinstance(e, ToolReturned))
    assert cli.main(["replay", str(path)]) == cli.EXIT_OK


def test_a_bad_name_in_a_reply_cut_off_is_refused_back_not_blamed_on_the_limit(server) -> None:
    client = OpenAIClient(server.url, "test-model", max_tokens=8)
    body = completion(None, [wire_call(EVIL, "{}")])
    body["choices"][0]["finish_reason"] = "length"
    server.queue(Reply(body))

    [kept] = client.complete([ChatMessage(role="user", content="hi")], []).tool_calls

    assert kept.name == "\\x1b]0;TITLE\\x07\\x1b[2Jevil" and UNREADABLE_ARGS in kept.args
