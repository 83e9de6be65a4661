"""A span's status message quotes what an error, an agent or a person said only as content is
quoted: scrubbed and bounded with content on, and left out (the error's kind only) with content
off, since a status is shipped with every span whatever the content setting."""

from __future__ import annotations

from typing import Any

from runtime.events import (
    CallData,
    ErrorInfo,
    Event,
    ModelCalled,
    ModelFailed,
    ModelResponded,
    ReplyOverdue,
    RunInconclusive,
    RunStarted,
    TeamFinished,
    TeamStarted,
    ToolDispatched,
    ToolReturned,
    Usage,
)
from runtime.journal import MemoryJournal, Recorded
from runtime.otel import TraceOptions
from runtime.otel.encode import build

RUN = "r-status"
T0 = 1_796_000_000.0
SECRET = "Authorization: Bearer sk-live-0123456789abcdefSECRET api_key=AKIAABCDEFGHIJKLMNOP"
LONG = f"request failed: {SECRET} " + "E" * 200_000
WHY = "customer's card 4111 1111 1111 1111 was charged twice"
ON, OFF = TraceOptions(content_chars=300), TraceOptions(content=False)


def event(cls: type[Event], at: float, **fields: Any) -> Any:
    return cls(id=f"{cls.kind}-{at}", t=T0 + at, run_id=RUN, **fields)


def journal(*tail: Event) -> list[Recorded]:
    """A coder whose tool call failed with a long error holding credentials, then `tail`."""
    j = MemoryJournal()
    call = CallData(id="c1", name="fetch", args={"url": "https://api.example.com"})
    j.append(
        f"run-{RUN}",
        [
            event(TeamStarted, 0, team="solo", scenario="s", task="fetch it"),
            event(RunStarted, 1, agent="coder", task="fetch it"),
            event(ModelCalled, 2, agent="coder", turn=0, messages=2),
            event(
                ModelResponded,
                3,
                agent="coder",
                turn=0,
                text="",
                tool_calls=[call],
                usage=Usage(total=5),
            ),
            event(ToolDispatched, 4, agent="coder", turn=0, tool="fetch", call_id="c1"),
            event(
                ToolReturned,
                5,
                agent="coder",
                turn=0,
                tool="fetch",
                call_id="c1",
                error=ErrorInfo(type="FetchError", message=LONG),
            ),
            *tail,
        ],
        0,
    )
    return j.read(f"run-{RUN}")


def spans(records: list[Recorded], options: TraceOptions) -> dict[str, Any]:
    return {s.name: s for s in build(records, options).spans}


def assert_quoted(message: str | None, *, content: bool) -> None:
    assert message is not None
    assert "sk-live" not in message and "AKIA" not in message and "4111" not in message
    assert len(message) < 600, "bounded"
    if content:
        assert "[REDACTED]" in message or "characters cut" in message


def test_a_tool_s_error_is_scrubbed_and_bounded_with_content_and_left_out_without():
    on = spans(journal(), ON)["execute_tool fetch"]
    assert_quoted(on.error, content=True)
    assert on.error.startswith("request failed: Authorization: [REDACTED]")
    off = spans(journal(), OFF)["execute_tool fetch"]
    assert_quoted(off.error, content=False)
    assert off.error == "FetchError (what it said is content, left out)"
    assert off.attributes["error.type"] == "FetchError"


def test_a_model_s_failure_and_the_agent_it_stops_quote_it_as_content():
    failed = event(
        ModelFailed, 6, agent="coder", turn=1, error=ErrorInfo(type="EndpointDown", message=LONG)
    )
    tail = [event(ModelCalled, 5.5, agent="coder", turn=1), failed]
    for options, content in ((ON, True), (OFF, False)):
        got = spans(journal(*tail), options)
        chat = next(s for name, s in got.items() if name.startswith("chat") and s.error)
        assert_quoted(chat.error, content=content)
        agent = got["invoke_agent coder"]
        assert_quoted(agent.error, content=content)
        assert agent.error.startswith("the model failed: ")
    assert got["invoke_agent coder"].error == (
        "the model failed: EndpointDown (what it said is content, left out)"
    )


def test_an_agent_s_stop_reasons_are_content():
    for stop, kind in (
        (event(RunInconclusive, 6, agent="coder", reason=LONG), "inconclusive"),
        (
            event(
                ReplyOverdue,
                6,
                agent="coder",
                reason=LONG,
                awaited="coder",
                request="m1",
                turns=3,
                elapsed=1.0,
            ),
            "overdue",
        ),
    ):
        assert_quoted(spans(journal(stop), ON)["invoke_agent coder"].error, content=True)
        off = spans(journal(stop), OFF)["invoke_agent coder"]
        assert off.error == f"{kind} (what it said is content, left out)"


def test_the_run_s_reason_a_person_gave_is_content():
    # As a person's discard of a dead letter ends a run (services/letters.py).
    finished = event(TeamFinished, 7, status="escalated", reason=f"discarded by rosa: {WHY}")
    root = spans(journal(finished), OFF)["invoke_agent solo"]
    assert root.error == "escalated (what it said is content, left out)"
    assert all("4111" not in str(v) for v in root.attributes.values())
    on = spans(journal(finished), ON)["invoke_agent solo"]
    assert on.error == f"discarded by rosa: {WHY}"  # no credential in it: quoted as it is
