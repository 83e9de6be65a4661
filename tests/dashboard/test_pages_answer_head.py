"""The pages answer HEAD as GET, without the body, as the API does: uptime monitors and link
checkers ask with HEAD, and every page answered 405 (Allow: GET)."""

from __future__ import annotations

import pytest
from django.http import StreamingHttpResponse
from django.test import RequestFactory

from dashboard.api.head import HeadAsGetMiddleware
from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db


def test_pages_answer_head_as_get_without_the_body(as_owner):
    run_id = run_of("first-flight")
    for address in (
        "/",
        "/metrics",
        "/search?q=parser",
        f"/runs/{run_id}/",
        f"/runs/{run_id}/export.jsonl",
        "/review/conflicts",
        "/review/dead-letters",
        "/runs/new",
    ):
        got, head = as_owner.get(address), as_owner.head(address)
        assert (address, head.status_code) == (address, got.status_code == 200 and 200)
        assert head["Content-Type"] == got["Content-Type"]
        if not got.streaming:  # what the GET would send, said without it
            assert head["Content-Length"] == str(len(got.content))
    assert as_owner.head(f"/runs/{run_id}/interrupt").status_code == 405  # still a POST


def test_a_pages_streamed_answer_to_head_is_never_read():
    """A HEAD of a run's export read its whole journal for a server to throw away (the test
    client drops the body itself, so this asks the middleware directly)."""
    started: list[bool] = []

    def journal():
        started.append(True)
        yield b"{}\n"

    middleware = HeadAsGetMiddleware(lambda request: StreamingHttpResponse(journal()))
    answer = middleware(RequestFactory().head("/runs/r-000000000001/export.jsonl"))
    assert list(answer.streaming_content) == [] and started == []
