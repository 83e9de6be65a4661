"""The support desk's refund is a step of the run's Audit tab and of its audit API: the amount,
the agent who decided it, and the provider's ledger entry (the refund the desk's payments table
holds under the effect's key)."""

from __future__ import annotations

import html

import pytest

from desk.models import Refund
from services import runs
from tests.dashboard.conftest import drive

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_desk_refund_shows_in_the_audit_with_amount_who_decided_and_ledger_entry(owner, as_owner):
    run_id = runs.start_run("support-desk", "double-refund", by="owner", desk={"order_id": "R-77"})
    assert drive(run_id) == "done"
    [refund] = Refund.objects.filter(order_id="R-77")  # one refund for two calls

    [entry] = [a for a in as_owner.get(f"/api/runs/{run_id}/audit").json() if a["what"] == "refund"]
    assert entry["who"] == "support-agent"
    effect = entry["detail"]["effect"]
    assert (effect["amount_cents"], effect["outcome"]) == (4999, "succeeded")
    assert effect["key"] == refund.key
    assert effect["ledger"]["refund_id"].startswith("rf-")

    page = html.unescape(as_owner.get(f"/runs/{run_id}/?tab=audit").content.decode())
    assert "Refund of 4999 cents on order:R-77, decided by support-agent" in page
    assert f'refund_id <span class="mono">{effect["ledger"]["refund_id"]}</span>' in page
    assert f'title="{refund.key}"' in page
    assert "arrived broken" in page  # the agent's reason for it
