"""One cell of the zero-intelligence 2 x 2 on a real model, offline: the coder on SmolLM2-135M
behind llama.cpp's server, the rule reviewer, the ZI tester.

A 135M model shows the mechanics only (whether it fixes the bug is not the question). What must
hold whatever it does: only the model side asked the model, the rule reviewer accepted only
passing test evidence the harness attached, nothing was integrated without an ACCEPT, and the
journal is complete, balanced and replays with no model at all.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from runtime import zero
from runtime.events import Integrated, MessageSent, ModelResponded
from tests.local_model.test_local_model import assert_guarantees, local_services

pytestmark = pytest.mark.slow


def test_a_local_coder_against_the_rule_reviewer_keeps_the_harness_guarantees(
    local_server, tmp_path
):
    here = local_services()
    path = tmp_path / "zi-local-rules.jsonl"
    cell = zero.fly_cell(
        "repo-fix", None, "local", "rules", path, tmp_path, here, allowance=60_000, max_turns=2
    )
    assert (cell["coder"], cell["reviewer"], cell["models"]) == (
        "local",
        "rules",
        {"coder": "local", "reviewer": "rules"},
    )
    events = assert_guarantees(SimpleNamespace(status=cell["status"]), path, cell["run"])
    answered = {e.agent for e in events if isinstance(e, ModelResponded)}
    assert "coder" in answered
    # The rule answered the reviewer's calls at its fixed 8 tokens: never the model.
    assert all(
        e.usage.total == zero.RULE_TOKENS
        for e in events
        if isinstance(e, ModelResponded) and e.agent == "reviewer"
    )
    sent = [e for e in events if isinstance(e, MessageSent)]
    accepts = {e.message_id for e in sent if e.performative == "accept"}
    assert all(i.approval in accepts for i in events if isinstance(i, Integrated))
    if accepts:  # the rule accepts only passing evidence the harness attached to a request
        evidence = [(e.payload or {}).get("tests") or {} for e in sent if e.recipient == "reviewer"]
        assert any(t.get("passed", 0) > 0 and t.get("failed", 1) == 0 for t in evidence)
    else:
        assert cell["integrated"] == 0 and cell["status"] != "done"
