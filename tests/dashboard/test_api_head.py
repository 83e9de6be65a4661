"""HEAD on the API's reads is answered as their GET, without the body: it was a 405 from every
one (django-ninja routes no HEAD), where a monitor or a proxy asks HEAD."""

from __future__ import annotations

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from runtime.events import TeamStarted

pytestmark = pytest.mark.django_db


def test_head_is_answered_as_get_without_the_body(api, client):
    run_id = "r-0000000000hd"
    started = TeamStarted(run_id=run_id, team="solo", scenario="solo-fix", task="t")
    DjangoJournal().append(f"run-{run_id}", [started], 0)
    projection.catch_up()
    for address in ("/api/runs", f"/api/runs/{run_id}", f"/api/runs/{run_id}/export"):
        got, head = api.get(address), api.head(address)
        assert (head.status_code, got.status_code) == (200, 200), address
        assert head["Content-Type"] == got["Content-Type"]
        assert b"".join(head.streaming_content if head.streaming else [head.content]) == b""
    listed = api.get("/api/runs")
    assert api.head("/api/runs")["Content-Length"] == str(len(listed.content))
    # Its refusals are the GET's: no token, no run, a parameter it does not take.
    assert client.head("/api/runs").status_code == 401
    assert api.head("/api/runs/r-nope").status_code == 404
    assert api.head("/api/runs?stauts=x").status_code == 422
    # And a write is still no read.
    assert api.head(f"/api/runs/{run_id}/interrupt").status_code == 405
