"""GET /api/intents/{id} answers a page of the intent's versions (`after`, `limit`, and `next`
to go on from), as a run's timeline is paged: it answered every version ever declared, read
whole at every look. Limits out of range are a 422 naming the field."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from runtime.coordination.gates import Intents
from runtime.events import IntentDeclared

pytestmark = pytest.mark.django_db

VERSIONS = 25


@pytest.fixture
def long_intent():
    versions = [
        IntentDeclared(intent_id="ticket-h", intent_version=n, statement=f"v{n}", by="p")
        for n in range(1, VERSIONS + 1)
    ]
    DjangoJournal().append(Intents.stream("ticket-h"), versions, 0)


def test_the_history_is_read_a_page_at_a_time(api, long_intent):
    seen: list[int] = []
    after: int | None = 0
    while after is not None:
        answer = api.get(f"/api/intents/ticket-h?after={after}&limit=10")
        assert answer.status_code == 200, answer.content
        body = answer.json()
        assert (body["version"], body["statement"]) == (VERSIONS, f"v{VERSIONS}")
        seen += [v["version"] for v in body["history"]]
        after = body["next"]
    assert seen == list(range(1, VERSIONS + 1))
    first = api.get("/api/intents/ticket-h").json()  # 100 by default: all 25, no next
    assert len(first["history"]) == VERSIONS and first["next"] is None
    past = api.get(f"/api/intents/ticket-h?after={VERSIONS}").json()
    assert past["history"] == [] and past["next"] is None and past["version"] == VERSIONS


@pytest.mark.parametrize(
    "query, field",
    [
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=ten", "limit"),
        ("after=-1", "after"),
        ("after=4611686018427387905", "after"),
    ],
)
def test_a_page_out_of_range_is_a_422_naming_its_field(api, long_intent, query, field):
    answer = api.get(f"/api/intents/ticket-h?{query}")
    assert answer.status_code == 422, answer.content
    assert [e["loc"] for e in answer.json()["detail"]] == [["query", field]]


def test_an_intent_nobody_declared_is_a_404(api):
    answer = api.get("/api/intents/ticket-none?limit=5")
    assert answer.status_code == 404 and "no intent ticket-none" in answer.json()["detail"]
