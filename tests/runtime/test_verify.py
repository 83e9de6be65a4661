from __future__ import annotations

from runtime import flat
from runtime.events import ErrorInfo, FindingUnsupported, ToolReturned
from runtime.fanout.contracts import Finding, Report
from runtime.fanout.verify import key_facts, tool_results, verify
from runtime.tools import Outcome

ORDER = {"order_id": "A-4471", "charges": [{"amount": 129.0}, {"amount": 129.0}], "refund": None}
POLICY = {"text": "Duplicate charges are refunded automatically within 5 business days."}

RESULTS = {
    "c1": Outcome("orders.find_order", result=ORDER),
    "c2": Outcome("policy.check_policy", result=POLICY),
    "c3": Outcome("orders.refund_status", error=ErrorInfo(type="HTTPError", message="503")),
}


def report(*findings: tuple[str, str, str]) -> Report:
    return Report(
        worker_id="billing",
        status="ok",
        findings=[Finding(claim=c, source_call_id=i, source_tool=t) for c, i, t in findings],
    )


def test_findings_backed_by_their_calls_pass():
    ok = report(
        ("Order A-4471 was charged twice, 129.00 each.", "c1", "orders.find_order"),
        ("Refunds for duplicates take 5 business days.", "c2", "policy.check_policy"),
        ('The policy says "refunded automatically".', "c2", "policy.check_policy"),
        ("No refund has been issued yet.", "c1", "orders.find_order"),
    )
    assert verify(ok, RESULTS) == []


def test_a_made_up_call_id_is_flagged():
    [problem] = verify(report(("Charged 129.00.", "c99", "orders.find_order")), RESULTS)
    assert (problem.reason, problem.call_id, problem.worker_id) == (
        "unknown_call",
        "c99",
        "billing",
    )


def test_a_finding_resting_on_a_failed_call_is_flagged():
    [problem] = verify(report(("No refund exists.", "c3", "orders.refund_status")), RESULTS)
    assert problem.reason == "call_failed"
    assert "HTTPError: 503" in problem.detail


def test_a_number_the_result_does_not_hold_is_flagged():
    [problem] = verify(report(("Charged 139.00 on A-4471.", "c1", "orders.find_order")), RESULTS)
    assert problem.reason == "facts_missing"
    assert problem.missing == ["139.00"]


def test_an_id_and_a_quote_the_result_does_not_hold_are_flagged():
    claim = 'Order B-9001 is "pending review" per the policy.'
    [problem] = verify(report((claim, "c2", "policy.check_policy")), RESULTS)
    assert problem.reason == "facts_missing"
    assert problem.missing == ["B-9001", "pending review"]


def test_a_call_to_another_tool_than_the_finding_names_is_flagged():
    [problem] = verify(report(("Charged 129.00.", "c1", "policy.check_policy")), RESULTS)
    assert problem.reason == "wrong_tool"


def test_problems_come_back_in_report_order():
    problems = verify(
        report(
            ("Charged 129.00.", "c1", "orders.find_order"),
            ("Charged 500.", "c1", "orders.find_order"),
            ("See ticket T-17.", "nope", "orders.find_order"),
        ),
        RESULTS,
    )
    assert [(p.reason, p.claim) for p in problems] == [
        ("facts_missing", "Charged 500."),
        ("unknown_call", "See ticket T-17."),
    ]


def test_key_facts_read_numbers_as_numbers_and_ids_as_one_fact():
    facts = key_facts('Order A-4471: 2 charges of $1,290.00 on 2026-07-01, said "twice".')
    assert facts.ids == ("A-4471",)
    assert facts.numbers == ("2", "1,290.00", "2026", "07", "01")
    assert facts.quotes == ("twice",)
    result = {"id": "a-4471", "amount": 1290, "n": 2, "date": "2026-07-01", "note": "Twice"}
    claim = 'Order A-4471: 2 charges of $1,290.00 on 2026-07-01, said "twice".'
    assert verify(report((claim, "c", "t")), {"c": Outcome("t", result=result)}) == []


def test_an_id_is_matched_whole_not_as_a_prefix():
    results = {"c": Outcome("t", result={"order_id": "A-44710"})}
    [problem] = verify(report(("Order A-4471.", "c", "t")), results)
    assert problem.missing == ["A-4471"]


def test_a_failed_report_has_its_partial_findings_checked_too():
    partial = Report(
        worker_id="billing",
        status="failed",
        reason="budget",
        findings=[
            Finding(claim="Charged 42.", source_call_id="c1", source_tool="orders.find_order")
        ],
    )
    assert [p.reason for p in verify(partial, RESULTS)] == ["facts_missing"]


def test_tool_results_from_the_journal_are_the_workers_own_last_attempts():
    events = [
        ToolReturned(
            agent="billing",
            tool="orders.find_order",
            call_id="c1",
            error=ErrorInfo(type="Timeout", message="t"),
        ),
        ToolReturned(
            agent="billing", tool="orders.find_order", call_id="c1", attempt=2, result=ORDER
        ),
        ToolReturned(agent="policy", tool="policy.check_policy", call_id="c2", result=POLICY),
    ]
    results = tool_results(events, "billing")
    assert set(results) == {"c1"}  # a sibling's call is not this worker's evidence
    ok = report(("Charged 129.00.", "c1", "orders.find_order"))
    assert verify(ok, results) == []
    borrowed = report(("Refunds take 5 business days.", "c2", "policy.check_policy"))
    assert [p.reason for p in verify(borrowed, results)] == ["unknown_call"]


def test_an_unsupported_finding_journals_as_an_event():
    [problem] = verify(report(("Charged 139.00.", "c1", "orders.find_order")), RESULTS)
    event = problem.event(run_id="r-1")
    assert isinstance(event, FindingUnsupported)
    assert (event.agent, event.reason, event.missing) == ("billing", "facts_missing", ["139.00"])
    assert flat.loads(flat.dumps(event, "run-r-1", 1), 1).event == event
