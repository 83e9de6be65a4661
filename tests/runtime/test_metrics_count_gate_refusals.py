"""Stale work refused at the mutation gate counts as contested ownership, as StaleWorkRejected
did before the gate: the metric does not drop because the refusal changed its name."""

from __future__ import annotations

from runtime import events as ev
from runtime.journal import Recorded
from runtime.metrics import metrics


def rate(events):
    records = [Recorded("run-r-1", i, i, e) for i, e in enumerate(events, start=1)]
    return metrics(records)["ownership_conflict_rate"]["value"]


def refused(check):
    return ev.MutationRefused(
        run_id="r-1",
        what="refund",
        actor="support-agent",
        capability="refund",
        check=check,
        reason="r",
    )


def test_an_intent_or_lease_refusal_is_contested_work_and_an_authority_one_is_not():
    lease = ev.LeaseGranted(run_id="r-1", resource="order:1", holder="w1", expires=999)
    claims = [lease, lease.model_copy(update={"resource": "order:2"})]
    assert rate([*claims, refused("intent"), refused("lease")]) == 1.0
    assert rate([*claims, refused("authority")]) == 0.0
