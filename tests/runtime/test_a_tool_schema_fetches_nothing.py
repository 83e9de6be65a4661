"""A tool's schema is checked with what it holds: a `$ref` is never fetched (over HTTP or from a
file), and one that does not resolve, or that recurses without end, refuses the call instead of
raising through the agent loop."""

from __future__ import annotations

import http.server
import threading

import pytest

from runtime import loop
from runtime.budget import Budget
from runtime.journal import MemoryJournal
from runtime.model import ScriptedClient, ToolCall, call
from runtime.session import Session
from runtime.tools import InvalidArguments, Tool, Toolbox


def referring(ref: str) -> dict:
    return {"type": "object", "properties": {"q": {"$ref": ref}}}


def check(parameters: dict, **args) -> None:
    tool = Tool("h.t", "A server's tool.", parameters, lambda **a: a)
    Toolbox([tool]).check(ToolCall(id="c1", name="h.t", args=args), "worker")


@pytest.fixture
def listener():
    """A web server on the loopback that answers every GET with a schema, noting the paths."""
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", asked
    server.shutdown()
    server.server_close()


def test_a_remote_reference_is_refused_and_never_fetched(listener):
    address, asked = listener
    with pytest.raises(InvalidArguments, match="no reference is fetched") as refused:
        check(referring(f"{address}/internal-metadata"), q="x")
    assert f"{address}/internal-metadata" in str(refused.value)
    assert asked == []


def test_a_file_reference_is_never_read_nor_quoted(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text('{"enum": ["db-password: hunter2"]}')
    with pytest.raises(InvalidArguments) as refused:
        check(referring(secret.as_uri()), q=1)
    assert "hunter2" not in str(refused.value)
    assert "not in it" in str(refused.value)


def test_a_local_reference_still_resolves():
    parameters = {
        "type": "object",
        "properties": {"q": {"$ref": "#/$defs/word"}},
        "$defs": {"word": {"type": "string"}},
    }
    check(parameters, q="fine")
    with pytest.raises(InvalidArguments, match="q: 1 is not of type 'string'"):
        check(parameters, q=1)


def test_a_schema_that_refers_to_itself_refuses_the_call_and_the_run_goes_on_and_replays():
    tool = Tool("h.t", "A server's tool.", referring("#/properties/q"), lambda **a: a)
    script = [call("h.t", 10, q=1), call("done", 5, summary="went on")]
    journal = MemoryJournal()
    agent = loop.Agent("w", ScriptedClient(script, "w"), Toolbox([tool]), "sys")
    result = loop.run(agent, "task", Session(journal, "r-1"), Budget(10_000), task_id="T1")
    assert result.status == "done"
    events = [r.event for r in journal.read("run-r-1")]
    [returned] = [e for e in events if e.kind == "ToolReturned" and e.tool == "h.t"]
    assert returned.error is not None and returned.error.type == "InvalidArguments"
    assert "refers to itself without end" in returned.error.message

    again = loop.Agent("w", ScriptedClient([], "w"), Toolbox([tool]), "sys")
    replay = Session(MemoryJournal(), "r-1", recorded=events, replay=True)
    assert loop.run(again, "task", replay, Budget(10_000), task_id="T1").status == "done"
    assert replay.live  # the whole record, every event as it was
