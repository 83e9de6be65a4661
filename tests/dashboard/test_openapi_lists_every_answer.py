"""The schema writes down what any operation may answer before its view runs (401 without a
token or session, 429 from an address locked out, 503 while the database does not answer or
is not migrated; 413 for a body too large), where it named none of them, and says what a
conflict's `choice` may be ("none" appeared only in an error message)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_every_operation_lists_the_answers_given_before_its_view(as_owner):
    schema = as_owner.get("/api/openapi.json").json()
    operations = [op for methods in schema["paths"].values() for op in methods.values()]
    assert len(operations) > 25
    for op in operations:
        answers = set(op["responses"])
        assert {"401", "429", "503"} <= answers, op["operationId"]
        if "requestBody" in op:
            assert "413" in answers, op["operationId"]
    choice = schema["components"]["schemas"]["ResolveIn"]["properties"]["choice"]
    assert '"none" to reject them all' in choice["description"]


def test_what_it_lists_is_what_is_answered(client, token):
    refused = client.get("/api/runs")
    assert refused.status_code == 401 and set(refused.json()) == {"detail"}
    big = client.post(
        "/api/runs",
        b"{" + b" " * (3 * 1024 * 1024) + b"}",
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert big.status_code == 413 and set(big.json()) == {"detail"}
