"""The timeline's Kinds list offers every kind the run has, the driving's lease events among
them (LeaseGranted: hidden unless "Show lease and driver events" is ticked); one chosen from
it showed "No events match". A kind asked for by name is shown wherever it is; without a kind
chosen, the lease events stay hidden unless asked."""

from __future__ import annotations

import re

import pytest

from journal_store import projection
from journal_store.models import StoredEvent
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true", "HX-Target": "tab"}


def rows(client, address: str) -> list[int]:
    page = client.get(address, headers=HTMX)
    assert page.status_code == 200
    return [int(p) for p in re.findall(r'<tr id="e(\d+)"', page.content.decode())]


def test_a_lease_kind_chosen_without_the_box_ticked_is_shown(as_owner):
    run_id = run_of("first-flight")
    projection.catch_up()
    granted = list(
        StoredEvent.objects.filter(run_id=run_id, kind="LeaseGranted")
        .order_by("position")
        .values_list("position", flat=True)
    )
    assert granted and all(
        s.startswith("lease-")
        for s in StoredEvent.objects.filter(kind="LeaseGranted").values_list("stream", flat=True)
    )
    page = as_owner.get(f"/runs/{run_id}/?tab=timeline").content.decode()
    assert 'value="LeaseGranted"' in page  # offered
    tab = f"/runs/{run_id}/tabs/timeline"
    assert rows(as_owner, f"{tab}?kind=LeaseGranted")[: len(granted)] == granted[:100]
    assert not set(granted) & set(rows(as_owner, tab))  # hidden when no kind is chosen
    assert granted[0] in rows(as_owner, f"{tab}?infra=1")
