"""A parallel writer's leases, as the run records them, read as one line each on the timeline."""

from __future__ import annotations

from dashboard.present import summary


def test_a_lease_taken_and_given_back_read_as_one_line_each():
    taken = {"holder": "coder-a", "resource": "r-1:fix:T1", "epoch": 3}
    assert summary("LeaseTaken", taken) == "coder-a took the lease on r-1:fix:T1 (epoch 3)"
    revoked = {
        "holder": "coder-b",
        "resource": "r-1:fix:T2",
        "outcome": "revoked: coder-b let its reply deadline pass twice on T2",
    }
    assert summary("LeaseGivenBack", revoked) == (
        "coder-b gave back the lease on r-1:fix:T2: revoked: coder-b let its reply deadline "
        "pass twice on T2"
    )


def test_a_specialists_lease_closed_by_its_run_reads_as_one_line():
    closed = {
        "by": "r-0123456789ab",
        "resource": "worker-r-0123456789ab-S2-kb-worker",
        "reason": "gave up after 3 starts: the specialist kept failing",
    }
    assert summary("LeaseClosed", closed) == (
        "r-0123456789ab closed the lease on worker-r-0123456789ab-S2-kb-worker for good: "
        "gave up after 3 starts: the specialist kept failing"
    )


def test_a_specialists_starts_read_as_one_line_each():
    lease = "worker-r-0123456789ab-S2-kb-worker"
    granted = {"holder": "w1", "resource": lease, "expires": 1.0, "attempt": 2}
    assert summary("LeaseGranted", granted) == f"w1 took the lease on {lease} (start 2)"
    assert summary("LeaseRenewed", {"holder": "w1", "resource": lease, "epoch": 3}) == (
        f"w1 renewed its lease on {lease}"
    )
    down = {
        "holder": "w1",
        "resource": lease,
        "outcome": "EndpointDown: HTTP 503",
        "retry_after": 30.0,
    }
    assert summary("LeaseReleased", down) == (
        f"w1 gave back the lease on {lease}: EndpointDown: HTTP 503 "
        "(its endpoint asked to wait 30 s)"
    )
    done = {"holder": "w1", "resource": lease, "outcome": "", "retry_after": None}
    assert summary("LeaseReleased", done) == f"w1 gave back the lease on {lease}"
