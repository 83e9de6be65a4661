from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from runtime.fanout.contracts import (
    ContractError,
    Finding,
    Handoff,
    Report,
    brief,
    parse_report,
    toolbox,
)
from runtime.model import ToolCall
from runtime.tools import Tool, UnknownTool, schema


def handoff(**changes):
    fields = {
        "worker_id": "billing",
        "objective": "Establish what order A-4471 was charged and whether a refund exists.",
        "inputs": {"order_id": "A-4471"},
        "allowed_tools": ["orders.find_order", "orders.refund_status"],
        "max_steps": 3,
        "max_tokens": 4000,
        "return_contract": "up to 3 findings, each citing its tool call",
        "deadline_seconds": 30,
    }
    return Handoff(**(fields | changes))


def fields_at_fault(exc: ValidationError) -> set[str]:
    return {".".join(str(p) for p in err["loc"]) for err in exc.errors()}


def test_a_valid_handoff_keeps_what_it_was_given():
    h = handoff()
    assert h.worker_id == "billing" and h.inputs == {"order_id": "A-4471"}
    assert h.revised(max_steps=6).max_steps == 6
    assert h.max_steps == 3  # revised is a copy


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"max_steps": 0}, "max_steps"),
        ({"max_tokens": -5}, "max_tokens"),
        ({"deadline_seconds": 0}, "deadline_seconds"),
        ({"objective": "   "}, "objective"),
        ({"return_contract": ""}, "return_contract"),
        ({"allowed_tools": []}, "allowed_tools"),
        ({"allowed_tools": ["kb.search", "kb.search"]}, "allowed_tools"),
        ({"inputs": {"order_id": None}}, "inputs"),
        ({"worker_id": "two words"}, "worker_id"),
        ({"context": "the whole chat"}, "context"),
    ],
)
def test_a_bad_handoff_names_the_field(changes, field):
    with pytest.raises(ValidationError) as caught:
        handoff(**changes)
    assert field in fields_at_fault(caught.value)


def test_a_missing_field_is_named():
    with pytest.raises(ValidationError) as caught:
        Handoff(worker_id="w", objective="o", allowed_tools=["t"], return_contract="r")
    assert {"max_steps", "max_tokens", "deadline_seconds"} <= fields_at_fault(caught.value)


def test_revised_validates_like_a_new_handoff():
    with pytest.raises(ValidationError) as caught:
        handoff().revised(max_tokens=0)
    assert "max_tokens" in fields_at_fault(caught.value)


def test_contracts_are_frozen():
    with pytest.raises(ValidationError):
        handoff().objective = "something else"  # type: ignore[misc]


def test_a_failed_report_needs_a_reason_and_an_ok_report_has_none():
    with pytest.raises(ValidationError) as caught:
        Report(worker_id="billing", status="failed")
    assert fields_at_fault(caught.value) == {"reason"}
    assert "needs a reason" in str(caught.value)

    with pytest.raises(ValidationError) as caught:
        Report(worker_id="billing", status="ok", reason="budget")
    assert fields_at_fault(caught.value) == {"reason"}

    with pytest.raises(ValidationError) as caught:
        Report(worker_id="billing", status="failed", reason="tired")
    assert fields_at_fault(caught.value) == {"reason"}

    assert Report(worker_id="billing", status="failed", reason="budget").reason == "budget"
    assert Report(worker_id="billing", status="ok").ok


def test_a_finding_names_its_call_and_tool():
    with pytest.raises(ValidationError) as caught:
        Finding(claim="two charges", source_call_id="", source_tool="orders.find_order")
    assert fields_at_fault(caught.value) == {"source_call_id"}
    with pytest.raises(ValidationError) as caught:
        Report(
            worker_id="billing",
            status="ok",
            findings=[{"claim": "x", "source_tool": "t"}],  # type: ignore[list-item]
        )
    assert fields_at_fault(caught.value) == {"findings.0.source_call_id"}


def test_parse_report_reads_json_and_names_what_is_wrong():
    h = handoff()
    good = {
        "worker_id": "billing",
        "status": "ok",
        "findings": [{"claim": "c", "source_call_id": "c1", "source_tool": "orders.find_order"}],
        "steps": 2,
        "tokens": 900,
    }
    assert parse_report(json.dumps(good), h).findings[0].source_call_id == "c1"
    assert parse_report(good, h).tokens == 900

    with pytest.raises(ContractError, match="missing field 'status'"):
        parse_report({"worker_id": "billing"}, h)
    with pytest.raises(ContractError, match="field 'reason'"):
        parse_report({"worker_id": "billing", "status": "failed"}, h)
    with pytest.raises(ContractError, match="not JSON"):
        parse_report("I wasn't able to find the order, sorry", h)
    # A worker's report is agent output: json's plain ValueError and RecursionError got out.
    with pytest.raises(ContractError, match="longer than 4,300 digits"):
        parse_report('{"worker_id": "billing", "steps": ' + "9" * 5000 + "}", h)
    with pytest.raises(ContractError, match="nested too deeply"):
        parse_report("[" * 100_000 + "]" * 100_000, h)
    with pytest.raises(ContractError, match=r"field 'worker_id'.*'policy'"):
        parse_report(good | {"worker_id": "policy"}, h)


def test_the_brief_is_rendered_from_the_handoff_alone():
    h = handoff(inputs={"order_id": "A-4471", "currency": "EUR"})
    text = brief(h)
    for part in [h.objective, "A-4471", "EUR", "orders.find_order", "3 steps", "4000 tokens"]:
        assert part in text
    assert h.return_contract in text
    assert "tool_error" in text  # the reason codes are part of the contract
    # Same hand-off, same words (a replay sends the same prompt); inputs order does not matter.
    same = handoff(inputs={"currency": "EUR", "order_id": "A-4471"})
    assert brief(same) == text
    # Another worker's facts are nowhere in it.
    assert "refund policy" not in text


def tool(name):
    return Tool(name, "d", schema({}), lambda: name)


def test_the_toolbox_holds_only_the_allowed_tools_and_enforces_them():
    tools = [tool("orders.find_order"), tool("orders.refund_status"), tool("payments.refund")]
    box = toolbox(handoff(), tools)
    assert [s["name"] for s in box.specs()] == ["orders.find_order", "orders.refund_status"]
    # A tool outside the belt does not exist for this worker (it does not even learn the name).
    with pytest.raises(UnknownTool):
        box.check(ToolCall(id="c1", name="payments.refund"), "billing")


def test_a_handoff_naming_a_tool_that_does_not_exist_fails_at_handoff():
    with pytest.raises(ContractError, match=r"allowed_tools.*orders\.refund_status"):
        toolbox(handoff(), [tool("orders.find_order")])
