"""schemathesis against the OpenAPI schema, in-process: no server errors, and every response
conforms to what the schema promises."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from config.wsgi import application

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def schema(token):
    # The schema is behind sign-in too: a script reads it with its token.
    return schemathesis.openapi.from_wsgi(
        "/api/openapi.json", application, headers={"Authorization": f"Bearer {token}"}
    )


def test_the_api_has_no_server_errors_and_keeps_its_schema(schema, token, done_run):
    failures = []
    for result in schema.get_all_operations():
        operation = result.ok()
        if operation.method.upper() == "POST" and operation.path == "/api/runs":
            continue  # starting runs is exercised in test_api; fuzzing would start hundreds

        @settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
        @given(case=operation.as_strategy())
        def check(case):
            # Not "positive data acceptance": a schema cannot say "a JSONL journal", so the
            # import rightly refuses schema-valid bytes that are not one (400, with the lines).
            case.call_and_validate(
                headers={"Authorization": f"Bearer {token}"},
                checks=[
                    not_a_server_error,
                    status_code_conformance,
                    content_type_conformance,
                    response_schema_conformance,
                ],
            )

        try:
            check()
        except Exception as exc:  # collect every operation's failure, then report them all
            failures.append(f"{operation.method.upper()} {operation.path}: {exc}")
    assert failures == [], "\n\n".join(failures)
