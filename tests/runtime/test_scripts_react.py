"""A scripted agent reacts to what its tools return: an IfFailed step is answered only after a
failed call, and a resumed script knows which way it went."""

from __future__ import annotations

import json

from runtime.model import ChatMessage, IfFailed, ScriptedClient, call

SCRIPT = [call("run_tests", 70), IfFailed(then=call("run_tests", 60)), call("done", 40)]


def after(observation: dict) -> list[ChatMessage]:
    return [
        ChatMessage(role="assistant", tool_calls=[]),
        ChatMessage(role="tool", content=json.dumps(observation), tool_call_id="x"),
    ]


FAILED = after({"tool": "run_tests", "error": {"type": "ToolExit", "message": "exited 137"}})
PASSED = after({"tool": "run_tests", "result": {"passed": 2, "failed": 0}})


def test_the_reacting_step_is_taken_after_a_failure_and_passed_over_after_a_success():
    reacting = ScriptedClient(SCRIPT, "coder")
    first = reacting.complete([], [])
    again = reacting.complete(FAILED, [])
    assert [c.name for c in again.tool_calls] == ["run_tests"] and again.usage.total == 60
    assert reacting.complete(PASSED, []).tool_calls[0].name == "done"

    calm = ScriptedClient(SCRIPT, "coder")
    calm.complete([], [])
    done = calm.complete(PASSED, [])
    assert done.tool_calls[0].name == "done"
    # call ids count answers, not script steps: the same in both runs for the same answer
    assert done.tool_calls[0].id == "coder-2-1" and first.tool_calls[0].id == "coder-1-1"


def test_a_resumed_script_fast_forwards_past_the_way_it_went():
    taken = ScriptedClient(SCRIPT, "coder")
    taken.fast_forward_over([SCRIPT[0], SCRIPT[1].then])
    assert taken.complete(PASSED, []).tool_calls[0].name == "done"

    passed = ScriptedClient(SCRIPT, "coder")
    passed.fast_forward_over([SCRIPT[0], SCRIPT[2]])
    assert passed.position == 3 and passed.served == 2
