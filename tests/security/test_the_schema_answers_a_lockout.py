"""The API's schema is read with a bearer token as the rest of the API is: a wrong token counts
towards the address's lockout, and an address locked out is answered 429 with Retry-After (the
token not looked at), where the schema answered a server error."""

from __future__ import annotations

import pytest
from django.test import Client

from dashboard.models import ApiToken
from tests.security.signin_helpers import FAILURE_LIMIT, person

pytestmark = pytest.mark.django_db

ADDRESS = "10.0.5.1"


def schema(token: str, address: str = ADDRESS):
    client = Client(raise_request_exception=False)
    return client.get(
        "/api/openapi.json", HTTP_AUTHORIZATION=f"Bearer {token}", REMOTE_ADDR=address
    )


def test_wrong_tokens_on_the_schema_lock_the_address_out_with_a_429():
    _, token = ApiToken.issue(person("rosa"), "script")
    answers = [schema(f"mt_guess{i}").status_code for i in range(FAILURE_LIMIT + 1)]
    assert answers[: FAILURE_LIMIT - 1] == [401] * (FAILURE_LIMIT - 1)
    assert answers[FAILURE_LIMIT - 1 :] == [429, 429]

    right = schema(token)
    assert right.status_code == 429
    assert "too many failed sign-ins" in right.json()["detail"]
    assert 890 <= int(right["Retry-After"]) <= 15 * 60
    assert token not in right.content.decode()
    assert schema(token, address="10.0.5.2").status_code == 200  # another address is not locked
