"""A ruling the mutation gate refuses as stale, on the queue's page, says what is still open in
the page's words: its button reads "reject both", and the refusal read "rejecting both claims
(choice 'none') still closes it", the API's choice. Two runs of the desk's lost-update on one
order, the first's conflict decided by committing a value: the second's ruling is stale."""

from __future__ import annotations

import html

import pytest

from tests.dashboard.conftest import claim_of, two_runs

pytestmark = pytest.mark.django_db


def test_a_stale_ruling_on_the_page_says_reject_both_in_the_pages_words(as_reviewer):
    first, second = two_runs("A-77")
    # The first conflict decided by committing a value: the order moves on from version 2.
    reply = as_reviewer.post(
        f"/review/conflicts/{first.conflict_id}/resolve",
        {"choice": claim_of(first, "cancelled"), "reason": "she asked before dispatch"},
    )
    assert reply.status_code == 302
    refused = as_reviewer.post(
        f"/review/conflicts/{second.conflict_id}/resolve",
        {"choice": claim_of(second, "shipped"), "reason": "the carrier has it"},
        HTTP_HX_REQUEST="true",
    )
    assert refused.status_code == 409
    said = html.unescape(refused.content.decode())
    assert "choosing “reject both” still closes it" in said
    assert "choice 'none'" not in said
