"""The run page says plainly what the coordination primitives decided: each new event kind in
one line on the timeline, the refusals and breaks in the audit with why, and each new finding
on the findings tab (the test agents' journals, imported as any journal is)."""

from __future__ import annotations

import io

import pytest

from dashboard.present import summary
from journal_store.transfer import import_journal
from runtime import flat
from tests.coordination.drills import flown

pytestmark = pytest.mark.django_db


def imported(name: str) -> str:
    run = flown(name)
    # its own stream: the drills' leases and facts are shared streams, which no import writes
    lines = [flat.dumps(e, f"run-{run.run_id}", v) for v, e in enumerate(run.events, start=1)]
    source = io.BytesIO(("\n".join(lines) + "\n").encode())
    return import_journal(source, name=f"{name}.jsonl").run_ids[0]


@pytest.mark.parametrize(
    "drill, timeline, audit, finding",
    [
        (
            "lease-pair",
            "DEADLOCK coder → migrator → coder: migrator&#x27;s wait refused",
            "the youngest, is refused",
            "deadlock broken: coder waits for migrator",
        ),
        (
            "delegation-cycle",
            "REFUSED delegation (cycle): researcher may not delegate to orchestrator",
            "already on the chain",
            "refused: researcher may not delegate to orchestrator",
        ),
        (
            "stalled-owner",
            "commitment c-refund moved orders-agent → support-agent",
            "orders-agent lost the lease on order:B2001",
            None,
        ),
        (
            "forgetful-owner",
            "COMMITTED refunds-agent to c-refund: refund B2001 or say why not",
            None,
            "commitment c-refund (refund B2001 or say why not) was still open",
        ),
        ("flip-flop", "LIVELOCK: order:B2001.status went back", "no progress", "livelock"),
    ],
)
def test_each_decision_reads_plainly_on_the_timeline_audit_and_findings(
    as_owner, drill, timeline, audit, finding
):
    run_id = imported(drill)
    page = as_owner.get(f"/runs/{run_id}/?tab=timeline").content.decode()
    assert timeline in page
    audited = as_owner.get(f"/runs/{run_id}/?tab=audit").content.decode()
    if audit is not None:
        assert audit in audited
    found = as_owner.get(f"/runs/{run_id}/?tab=findings").content.decode()
    if finding is not None:
        assert finding in found


def test_the_refused_duplicate_and_the_waits_read_as_one_line_each():
    refused = {"reason": "tests/test_parser.py is coder's work on T1; tester on T3 may not redo it"}
    assert summary("DuplicateWorkRefused", refused).startswith(
        "REFUSED duplicate work: tests/test_parser.py is coder's work on T1"
    )
    waited = {"waiter": "coder", "holder": "migrator", "resource": "db"}
    assert summary("LeaseAwaited", waited) == "coder waits for migrator's lease on db"
    handed = {"by": "triager", "to": "researcher", "chain": ["orchestrator", "triager"], "depth": 2}
    assert summary("WorkDelegated", handed) == (
        "delegated orchestrator → triager → researcher (depth 2)"
    )
