"""A conflict's form refused for a box left blank says which, in the form's words: a reason of
spaces with "reject both" chosen was answered "choose a claim (or none) and say why", as if
nothing had been chosen either, and named a "none" the form does not show."""

from __future__ import annotations

from html import unescape

import pytest

from journal_store.models import Conflict, StoredEvent
from tests.security.test_small_decision_reasons import conflict

pytestmark = pytest.mark.django_db

CHOOSE = "choose a decision: a claim to commit, or reject both"
SAY_WHY = "say why: the Why box is blank"


@pytest.mark.parametrize(
    ("form", "said", "not_said"),
    [
        ({"choice": "none", "reason": "   "}, SAY_WHY, CHOOSE),
        ({"choice": "k1", "reason": ""}, SAY_WHY, CHOOSE),
        ({"reason": "both are wrong"}, CHOOSE, SAY_WHY),
        ({"choice": "", "reason": "both are wrong"}, CHOOSE, SAY_WHY),
        ({}, f"{CHOOSE}; {SAY_WHY}", None),
    ],
)
@pytest.mark.parametrize("headers", [{}, {"HTTP_HX_REQUEST": "true"}])
def test_a_ruling_refused_for_a_blank_box_names_that_box(
    as_reviewer, form, said, not_said, headers
):
    conflict_id = conflict()
    events = StoredEvent.objects.count()
    answer = as_reviewer.post(f"/review/conflicts/{conflict_id}/resolve", form, **headers)
    assert answer.status_code == 400
    page = unescape(answer.content.decode())
    assert said in page, page[:2000]
    if not_said:
        assert not_said not in page
    assert "or none" not in page
    assert StoredEvent.objects.count() == events
    assert Conflict.objects.get(conflict_id=conflict_id).status == "open"
