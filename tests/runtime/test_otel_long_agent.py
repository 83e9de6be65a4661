"""A long-lived agent's trace fold keeps what a later model call's input can show, not the
whole conversation: its state stays the size of the agent's window however long it runs, and
the trace is the same as a fold that never prunes; stored and loaded after every record it
hands out the same spans, and a state of an older format (the whole conversation) is rebuilt."""

from __future__ import annotations

import json

import pytest

from runtime import flight
from runtime.journal import MemoryJournal
from runtime.model import call
from runtime.otel import TraceOptions, conversation
from runtime.otel.encode import folded
from runtime.otel.fold_state import FoldStateError, LiveFold, dump, load
from runtime.otel.text import span_text
from runtime.team import Scenario

TURNS = 100  # past twice the window's ~64 messages: the conversation is pruned


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """The solo coder reading a file turn after turn (as bench/long_run.py builds a run)."""
    reads = [call("read_file", 50, path="textparse/parser.py") for _ in range(TURNS)]
    team = flight.team_named("solo")
    team.scenarios["long-read"] = Scenario(
        name="long-read",
        description="one agent, many turns",
        task="Read the parser, again and again.",
        settings={"template": "parse-empty"},
        scripts={"coder": [*reads, call("done", 10, summary="read")]},
    )
    # Set for this flight only: a variable left in os.environ reaches every later test of the
    # process, and the subprocesses they start (manage.py then warns of the sandbox first).
    with pytest.MonkeyPatch.context() as patched:
        patched.setenv("MINUTES_SANDBOX", "off")
        try:
            memory = MemoryJournal()
            plan = flight.plan("solo", "long-read", "r-long", max_turns=TURNS + 5, allowance=10**9)
            flight.fly(memory, plan, "r-long", tmp_path_factory.mktemp("long-agent"))
        finally:
            del team.scenarios["long-read"]
    return memory.read("run-r-long")


def texts(records, options):
    return [span_text(s, t.trace_id) for t, s in folded(records, options)]


def test_the_trace_is_the_one_a_fold_that_never_prunes_gives(records, monkeypatch):
    options = TraceOptions()
    pruned = texts(records, options)
    inputs = [t for t in pruned if "gen_ai.input.messages" in t]
    assert len(inputs) == TURNS + 1
    for name in ("INPUT_PIECES", "KEEP", "SLACK"):
        monkeypatch.setattr(conversation, name, 10**9)
    assert texts(records, options) == pruned


def test_the_state_is_the_size_of_the_window_and_rebuilds_the_same_spans(records):
    options = TraceOptions()
    fold = LiveFold.start("r-long", options)
    pushed: list[str] = []
    longest = widest = 0
    for rec in records:
        pushed += [span_text(s, fold.trace.trace_id) for s in fold.step([rec])]
        fold = LiveFold(load(dump(fold.trace), "r-long", options), fold.spans)
        for run in fold.trace.agents.values():
            longest = max(longest, len(run.history))
            assert len(run.asked) <= 1  # this reply's call, not every call of the run
            widest = max(widest, run.widest)
    shown = max(r.event.messages or 0 for r in records if r.event.kind == "ModelCalled") - 2
    assert widest == shown
    # The task, twice the widest input and the slack, and what one turn adds before a call.
    assert longest <= 1 + 2 * shown + conversation.SLACK + 3 < 2 * TURNS
    whole = [span_text(s, t.trace_id) for t, s in folded(records, options, finish=False)]
    assert pushed == whole


def test_a_state_of_the_format_before_pruning_is_refused(records):
    options = TraceOptions()
    fold = LiveFold.start("r-long", options)
    fold.step(records[:50])
    state = json.loads(dump(fold.trace))
    state["format"] = 5
    with pytest.raises(FoldStateError):
        load(json.dumps(state), "r-long", options)
