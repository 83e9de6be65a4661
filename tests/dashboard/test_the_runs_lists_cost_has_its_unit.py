"""The runs list's Cost, and the bill's per agent, are in the price table's currency, said in
their headings and each row's label (the label a narrow screen shows beside the figure), as the
Bill tab's cost per task says "USD": the list's was "0.0000" on every row with no unit."""

from __future__ import annotations

import pytest

from runtime.prices import Table

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("currency", ["USD", "EUR"])
def test_the_cost_column_names_its_currency(as_owner, done_run, settings, currency):
    settings.PRICES = Table(currency, dict(settings.PRICES.models))
    page = as_owner.get("/").content.decode()
    assert f'<th scope="col" class="num wide">Cost ({currency})</th>' in page
    assert f'data-label="Cost ({currency})"' in page
    row = as_owner.get(f"/runs/{done_run}/row").content.decode()
    assert f'data-label="Cost ({currency})"' in row


@pytest.mark.parametrize("currency", ["USD", "EUR"])
def test_the_bills_cost_per_agent_names_its_currency(as_owner, done_run, settings, currency):
    """The Bill tab's table per agent gave its cost as a bare figure too, where its cost per
    task below said the currency."""
    settings.PRICES = Table(currency, dict(settings.PRICES.models))
    bill = as_owner.get(f"/runs/{done_run}/?tab=bill").content.decode()
    assert f'<th scope="col" class="num">Cost ({currency})</th>' in bill
    assert f'data-label="Cost ({currency})"' in bill
