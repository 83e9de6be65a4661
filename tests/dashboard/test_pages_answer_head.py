"""The pages answer HEAD as GET, without the body, as the API does: uptime monitors and link
checkers ask with HEAD, and every page answered 405 (Allow: GET)."""

from __future__ import annotations

import pytest

from tests.dashboard.conftest import run_of

pytestmark = pytest.mark.django_db(transaction=True)


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
        assert b"".join(head) == b""
        assert head["Content-Type"] == got["Content-Type"]
    assert as_owner.head(f"/runs/{run_id}/interrupt").status_code == 405  # still a POST
