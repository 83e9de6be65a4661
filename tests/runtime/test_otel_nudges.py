"""A model call's input in the trace is what the model was sent: after a reply of more calls
than a turn runs, the calls that ran (their answers) and the loop's word about the rest; after a
reply in plain prose, the loop's nudge. The input is bounded however many calls a reply asked
for. A live fold stored between records hands out the same spans."""

from __future__ import annotations

import json

from runtime import loop
from runtime.budget import Budget
from runtime.journal import MemoryJournal
from runtime.model import ModelResponse, ToolCall, Usage, call
from runtime.otel import TraceOptions
from runtime.otel.conversation import INPUT_PIECES
from runtime.otel.encode import build, folded
from runtime.otel.fold_state import LiveFold, dump, load
from runtime.otel.text import span_text
from runtime.session import Session
from tests.runtime.test_a_reply_of_many_calls import ASKED, Watched, agent


def flown(script):
    journal, client = MemoryJournal(), Watched(script)
    loop.run(agent([], client), "task", Session(journal, "r-1"), Budget(10**9), task_id="T1")
    return journal.read("run-r-1"), client.windows


def many(asked):
    calls = [ToolCall(id="", name="note", args={"n": n}) for n in range(asked)]
    return [ModelResponse(tool_calls=calls, usage=Usage(total=10)), call("done", 5, summary="ok")]


def inputs(records, options=None):
    chats = [
        s for s in build(records, options or TraceOptions()).spans if s.name.startswith("chat")
    ]
    return [json.loads(s.attributes["gen_ai.input.messages"]) for s in chats], chats


def as_sent(window):
    """A window the model got, less its system prompt (not journalled), as the trace says it:
    role, text and the ids of the calls asked or answered."""
    out = []
    for m in window[1:]:
        ids = [c.id for c in m.tool_calls or []] or ([m.tool_call_id] if m.tool_call_id else [])
        out.append((m.role, m.content if m.role in ("user", "assistant") else None, ids))
    return out


def as_traced(messages):
    out = []
    for m in messages:
        texts = [p["content"] for p in m["parts"] if p["type"] == "text"]
        ids = [p["id"] for p in m["parts"] if p["type"] in ("tool_call", "tool_call_response")]
        text = texts[0] if texts else (None if m["role"] == "tool" else "")
        out.append((m["role"], text, ids))
    return out


def test_after_a_reply_of_too_many_calls_the_input_holds_the_calls_that_ran_and_the_word():
    records, windows = flown(many(ASKED))
    sent, chats = inputs(records)
    assert as_traced(sent[1]) == as_sent(windows[1])
    assert sent[1][-1]["parts"][0]["content"] == loop.too_many(ASKED)
    # The answer itself still says what the model asked for: every call.
    said = json.loads(chats[0].attributes["gen_ai.output.messages"])
    assert len(said[0]["parts"]) == ASKED


def test_after_a_reply_in_prose_the_input_holds_the_nudge():
    prose = ModelResponse(text="I think it is fine.", usage=Usage(total=5))
    records, windows = flown([prose, call("done", 5, summary="ok")])
    sent, _ = inputs(records)
    assert as_traced(sent[1]) == as_sent(windows[1])
    assert sent[1][-1] == {"role": "user", "parts": [{"type": "text", "content": loop.NUDGE}]}


def test_a_journal_from_before_the_cap_ran_every_call_and_its_input_shows_them_all():
    records, _ = flown(many(ASKED))
    # As such a journal reads: no word about calls not run (it ran them all).
    older = [r for r in records if r.event.kind != "AgentNudged"]
    sent, _ = inputs(older)
    asked = [p for m in sent[1] for p in m["parts"] if p["type"] == "tool_call"]
    assert len(asked) == ASKED
    assert sent[1][-1]["role"] == "tool"


def test_an_input_is_bounded_however_many_calls_a_reply_asked_for():
    options = TraceOptions(content_chars=40)
    records, _ = flown(many(3_000))
    _, chats = inputs(records, options)
    big = chats[1].attributes["gen_ai.input.messages"]
    task = len(json.dumps({"role": "user", "parts": [{"type": "text", "content": "task"}]}))
    assert len(big) <= INPUT_PIECES * 40 + task + 2
    assert chats[1].attributes["minutes.window.left_out"] > 0
    assert json.loads(big)[-1]["parts"][0]["content"] == loop.too_many(3_000)[:40] + (
        f"… [{len(loop.too_many(3_000)) - 40} of {len(loop.too_many(3_000))} characters cut]"
    )
    assert "minutes.window.left_out" not in chats[0].attributes  # the first input fit


def test_a_fold_stored_after_every_record_gives_the_same_inputs():
    records, _ = flown(many(ASKED))
    options = TraceOptions()
    fold = LiveFold.start("r-1", options)
    pushed: list[str] = []
    for rec in records:
        pushed += [span_text(s, fold.trace.trace_id) for s in fold.step([rec])]
        fold = LiveFold(load(dump(fold.trace), "r-1", options), fold.spans)
    whole = [span_text(s, t.trace_id) for t, s in folded(records, options, finish=False)]
    assert pushed == whole
