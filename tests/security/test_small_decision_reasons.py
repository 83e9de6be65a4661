"""Every decision route of the API needs a reason, as the pages do: a missing, empty or blank
reason is refused (422, naming the field) before anything is journalled."""

from __future__ import annotations

import pytest
from django.test import Client

from dashboard.models import ApiToken
from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import Conflict, DeadLetter, StoredEvent
from runtime.events import ConflictParked, DeadLettered
from services import review
from tests.security.signin_helpers import person

pytestmark = pytest.mark.django_db

RUN = "r-5ec0decided"
BLANKS = [{}, {"reason": ""}, {"reason": "   \n\t "}]


@pytest.fixture
def api():
    _, token = ApiToken.issue(person("reviewer", decide=True), "script")
    client = Client()
    client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return client


def letter() -> str:
    DjangoJournal().append(
        f"run-{RUN}",
        [DeadLettered(run_id=RUN, letter_id=f"{RUN}:1", reason="no reply", attempts=2)],
        0,
    )
    projection.catch_up()
    return f"{RUN}:1"


def conflict() -> str:
    review.park(
        ConflictParked(
            run_id=RUN,
            conflict_id="c-blank",
            subject="order:1",
            predicate="status",
            conflict_type="state",
            claims=[{"claim_id": "k1", "value": "refunded"}, {"claim_id": "k2", "value": "kept"}],
        )
    )
    return "c-blank"


def assert_names_the_reason(response) -> None:
    assert response.status_code == 422, response.content
    assert any(error["loc"][-1] == "reason" for error in response.json()["detail"])


@pytest.mark.parametrize("decision", ["retry", "discard"])
def test_a_dead_letter_decision_without_a_reason_is_refused(api, decision):
    letter_id = letter()
    events = StoredEvent.objects.count()
    for body in BLANKS:
        response = api.post(
            f"/api/review/dead-letters/{letter_id}/{decision}",
            body,
            content_type="application/json",
        )
        assert_names_the_reason(response)
    assert StoredEvent.objects.count() == events
    assert DeadLetter.objects.get(letter_id=letter_id).status == "open"

    said = api.post(
        f"/api/review/dead-letters/{letter_id}/{decision}",
        {"reason": "  the reviewer is back  "},
        content_type="application/json",
    )
    assert said.status_code == 200 and said.json()["decision_reason"] == "the reviewer is back"


def test_a_conflict_resolution_without_a_reason_is_refused(api):
    conflict_id = conflict()
    events = StoredEvent.objects.count()
    for body in BLANKS:
        response = api.post(
            f"/api/review/conflicts/{conflict_id}/resolve",
            {"choice": "k1", **body},
            content_type="application/json",
        )
        assert_names_the_reason(response)
    assert StoredEvent.objects.count() == events
    assert Conflict.objects.get(conflict_id=conflict_id).status == "open"
