"""A call to the API that neither a token nor a session opens is answered 401 saying what it
sent wrong (no Authorization header, another scheme, no token after Bearer, a token nobody
here holds) and how a token is made, where every one of them read a bare "Unauthorized". The
token sent is never said back, and nothing is written."""

from __future__ import annotations

import pytest
from django.test import Client

from journal_store.models import StoredEvent

pytestmark = pytest.mark.django_db

BODY = {"team": "repo-fix", "scenario": "first-flight"}
MISTYPED = "mt_not-a-token-anybody-holds"


def refused(header: str | None, path: str = "/api/runs") -> str:
    client = Client(raise_request_exception=False)
    extra = {} if header is None else {"HTTP_AUTHORIZATION": header}
    for answer in (
        client.get(path, **extra),
        client.post("/api/runs", BODY, "application/json", **extra),
    ):
        assert answer.status_code == 401, answer.content
        assert MISTYPED not in answer.content.decode()
    said: str = client.get(path, **extra).json()["detail"]
    assert "`manage.py api_token USER` makes" in said
    return said


def test_each_refusal_names_what_was_sent_wrong():
    assert refused(None).startswith("no Authorization header: sign in, or send `Authorization")
    assert refused(f"Token {MISTYPED}").startswith("the Authorization header is not `Bearer")
    assert refused("Bearer ").startswith("the Authorization header holds no token after Bearer")
    assert refused(f"Bearer {MISTYPED}").startswith("no token here is the one sent")
    assert StoredEvent.objects.count() == 0


def test_the_schema_refuses_in_the_same_words():
    said = refused(f"Bearer {MISTYPED}", "/api/openapi.json")
    assert said.startswith("no token here is the one sent")
