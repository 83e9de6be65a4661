"""Agents with no intelligence, to measure what the harness guarantees by itself.

Gode and Sunder replaced a market's traders with zero-intelligence bidders to see how much of
its performance was the institution's. The same instrument on a team: a ZIClient answers every
call with its role's fixed `done` at a nominal 5 tokens, whatever its window says (a coder
reports without editing or testing, a reviewer accepts, a tester says green), and a RuleClient
is a reviewer that is still not a model: one 8-token rule that accepts exactly the submissions
whose harness-attached test evidence shows passing tests and no failures.

Both are deterministic (a resumed or replayed run gets the same answers), chosen per agent
like any backend: `--model-for coder=zi --model-for reviewer=rules`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from runtime.events import Usage
from runtime.model import ChatMessage, ModelClient, ModelResponse, ToolSpec, call

ZI_TOKENS = 5
RULE_TOKENS = 8
# A role's one reply: what its done tool's contract asks for, with nothing behind it.
STUBS: dict[str, dict[str, Any]] = {
    "coder": {"summary": "done"},
    "reviewer": {"verdict": "accept", "reasons": "looks fine"},
    "tester": {"verdict": "green", "summary": "all green"},
}


def role_of(agent: str) -> str:
    """A team's agent names say their role ("coder-a" codes, "reviewer" reviews)."""
    return next((role for role in STUBS if agent.startswith(role)), agent)


class ZIClient(ModelClient):
    """The same `done` for every call of `agent`, whatever its window holds."""

    def __init__(self, agent: str) -> None:
        self.agent = agent
        self.stub = STUBS.get(role_of(agent), {"summary": "done"})

    def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelResponse:
        return with_usage(call("done", ZI_TOKENS, **self.stub), messages)


class RuleClient(ModelClient):
    """A reviewer by rule: accept when the newest request's evidence shows tests that passed
    and none that failed; reject otherwise. It reads the harness's evidence, never the coder's
    words."""

    def complete(self, messages: Sequence[ChatMessage], tools: Sequence[ToolSpec]) -> ModelResponse:
        tests = evidence(messages)
        if tests is not None and tests.get("passed", 0) > 0 and tests.get("failed", 1) == 0:
            verdict, reasons = "accept", f"{tests['passed']} passed, 0 failed"
        else:
            verdict, reasons = "reject", "no passing test evidence with the submission"
        return with_usage(call("done", RULE_TOKENS, verdict=verdict, reasons=reasons), messages)


def evidence(messages: Sequence[ChatMessage]) -> dict[str, Any] | None:
    """The `tests` of the newest message in the window that carries one (a request's payload
    is JSON after its header line, as runtime/messages.py renders it)."""
    for message in reversed(messages):
        if message.role != "user" or not message.content:
            continue
        _, _, body = message.content.partition("\n")
        try:
            payload = json.loads(body)
        except json.JSONDecodeError:
            continue
        if isinstance(payload, dict) and "tests" in payload:
            tests = payload["tests"]
            return tests if isinstance(tests, dict) else None
    return None


def with_usage(response: ModelResponse, window: Sequence[ChatMessage]) -> ModelResponse:
    """A nominal cost, said as all output: these clients read nothing they are paid for."""
    total = response.usage.total
    return response.model_copy(update={"usage": Usage(total=total, prompt=0, completion=total)})


# --- the 2 x 2: competent or ZI coder, rule or ZI reviewer, the ZI tester throughout ---------

CODERS = ("scripted", "zi")
REVIEWERS = ("rules", "zi")


def cell(records: Sequence[Any], coder: str, reviewer: str) -> dict[str, Any]:
    """What one cell's journal shows: the verdict, the spend, whether an ACCEPT was given and
    what was integrated, the harness's own suite check, and whether every integration cited an
    ACCEPT that is in the journal."""
    from runtime import views
    from runtime.events import Integrated, MessageSent, SuiteChecked, TeamFinished

    events = [r.event for r in records]
    accepts = {
        e.message_id
        for e in events
        if isinstance(e, MessageSent) and e.performative.lower() == "accept"
    }
    integrated = [e for e in events if isinstance(e, Integrated)]
    suite = next((e for e in events if isinstance(e, SuiteChecked)), None)
    verdict = next((e for e in events if isinstance(e, TeamFinished)), None)
    return {
        "coder": coder,
        "reviewer": reviewer,
        "status": verdict.status if verdict else "unfinished",
        "reason": verdict.reason if verdict else "",
        "tokens": views.bill(records)["total"]["tokens"],
        "accept": bool(accepts),
        "integrated": len(integrated),
        "every_integration_cites_an_accept": all(i.approval in accepts for i in integrated),
        "suite": None if suite is None else {"passed": suite.passed, "failed": suite.failed},
        "suite_checked_by_harness": suite is not None or not integrated,
    }


def table(cells: Sequence[dict[str, Any]]) -> str:
    """The cells as `python -m runtime zi` prints them, then what held in every cell."""
    lines = [
        f"{'coder':<10}{'reviewer':<10}{'verdict':<12}{'tokens':>7}  {'ACCEPT':<7}"
        f"{'integrated':<11}{'suite':<12}",
    ]
    for c in cells:
        suite = "-" if c["suite"] is None else f"{c['suite']['passed']}/{c['suite']['failed']} p/f"
        lines.append(
            f"{c['coder']:<10}{c['reviewer']:<10}{c['status']:<12}{c['tokens']:>7}  "
            f"{'yes' if c['accept'] else 'no':<7}{c['integrated']:<11}{suite:<12}"
        )
    held = {
        "no integration without an ACCEPT in the journal": all(
            c["every_integration_cites_an_accept"] for c in cells
        ),
        "the suite's verdict is the harness's own run, not an agent's word": all(
            c["suite_checked_by_harness"] for c in cells
        ),
        "a red suite is never reported done": all(
            not (c["status"] == "done" and c["suite"] and c["suite"]["failed"]) for c in cells
        ),
    }
    shipped_untested = [
        f"{c['coder']} x {c['reviewer']}" for c in cells if c["integrated"] and c["coder"] == "zi"
    ]
    lines += ["", "held in every cell (the harness's):"]
    lines += [f"  {'yes' if ok else 'NO '} {name}" for name, ok in held.items()]
    lines += [
        "",
        "what the harness supplied in no cell: that the ACCEPT it requires means anything. "
        + (
            f"An empty, untested change was integrated in {', '.join(shipped_untested)} "
            "on a rubber-stamp ACCEPT; only the harness's own suite check called it failed."
            if shipped_untested
            else "No untested change was integrated here."
        ),
    ]
    return "\n".join(lines)
