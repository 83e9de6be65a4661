"""A person's supersession of an intent sent again (a retried request, a second click) is one
decision: answered with the version the first wrote, nothing written. Without `version` the
second wrote another version, the same words again, which refused the runs that had taken the
first at their next change; with the `version` it was based on, it was told "somebody
superseded it since you looked" of the person's own supersession."""

from __future__ import annotations

import pytest
from django.test import Client

from journal_store.journal import DjangoJournal
from runtime.events import IntentDeclared
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db

WANTED = {"statement": "fix only the parser", "reason": "the owner asked"}


def declared(run_id: str) -> list[tuple[int, str, str]]:
    records = DjangoJournal().read(f"intent-task-{run_id}")
    return [
        (r.event.intent_version, r.event.statement, r.event.by)
        for r in records
        if isinstance(r.event, IntentDeclared)
    ]


@pytest.mark.parametrize("based_on", [{}, {"version": 1}])
def test_a_supersession_sent_again_is_answered_with_the_version_it_wrote(api, based_on):
    run_id = run_of("first-flight", steps=1)
    url = f"/api/intents/task-{run_id}"
    first = api.post(url, WANTED | based_on, "application/json")
    assert first.status_code == 200, first.content
    again = api.post(url, WANTED | based_on, "application/json")
    assert again.status_code == 200, again.content
    assert again.json() == first.json() and first.json()["version"] == 2
    assert declared(run_id) == [(2, "fix only the parser", "reviewer")]


def test_another_reason_or_a_version_read_since_is_another_supersession(api):
    run_id = run_of("first-flight", steps=1)
    url = f"/api/intents/task-{run_id}"
    assert api.post(url, WANTED, "application/json").status_code == 200
    why = {**WANTED, "reason": "and the owner asked again"}
    assert api.post(url, why, "application/json").json()["version"] == 3
    assert api.post(url, {**why, "version": 3}, "application/json").json()["version"] == 4
    stale = api.post(url, {**WANTED, "version": 1}, "application/json")
    assert stale.status_code == 409 and "is at version 4, not 1" in stale.json()["detail"]
    assert [v for v, _, _ in declared(run_id)] == [2, 3, 4]


def test_who_comes_second_is_told_who_superseded_it_and_to_what(api):
    """The second of two people superseding one version was told "somebody superseded it"."""
    from dashboard.models import ApiToken
    from tests.dashboard.conftest import make_user

    ann = Client(HTTP_AUTHORIZATION=f"Bearer {ApiToken.issue(make_user('ann', True), 't')[1]}")
    run_id = run_of("first-flight", steps=1)
    url = f"/api/intents/task-{run_id}"
    assert ann.post(url, {**WANTED, "version": 1}, "application/json").status_code == 200
    mine = {"statement": "rewrite the lexer", "reason": "it is the real bug", "version": 1}
    second = api.post(url, mine, "application/json")
    assert second.status_code == 409
    assert second.json()["detail"] == (
        f"intent task-{run_id} is at version 2, not 1: somebody superseded it since you looked "
        "(ann, whose version 2 reads 'fix only the parser', for the reason 'the owner asked'); "
        "read it again"
    )
    assert declared(run_id) == [(2, "fix only the parser", "ann")]
