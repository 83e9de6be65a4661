"""A run whose agents' output holds NUL characters (a model's reply, a tool that read a binary
file's bytes, an error, a claim, a conflict and a dead letter made of them) answers on every
page and API address of the run, on SQLite and on PostgreSQL, showing U+FFFD where the NUL
was (journal_store/nul.py); its export gives back the events exactly as appended. On
PostgreSQL its claim did not append (the claims' id index: migration 0052), and a NUL in the
read models failed their catch-up there."""

from __future__ import annotations

import io

import pytest
from django.db import connections
from django.test import Client

from journal_store import nul, projection, transfer
from journal_store.journal import DjangoJournal
from journal_store.models import Conflict, DeadLetter, StoppedView
from runtime import events as ev
from runtime import flat
from runtime.coordination.claims import Claims
from tests.conftest import ALIASES
from tests.dashboard.conftest import client_for
from tests.dashboard.test_every_run_url_answers_a_run_with_an_unreadable_row import TABS

pytestmark = pytest.mark.django_db(databases=ALIASES, transaction=True)

RUN = "r-0a1b2c3d4e5f"
BYTES = "PK\x03\x04\x00\x00 and the text \\u0000"  # a NUL, and a backslash before "u0000"


def journal() -> list[tuple[str, list[ev.Event]]]:
    r = {"run_id": RUN}
    run = [
        ev.TeamStarted(**r, team="solo", scenario="solo-fix", task="fix\x00 it"),
        ev.RunStarted(**r, agent="coder", task="fix\x00 it"),
        ev.ModelCalled(**r, agent="coder", turn=0),
        ev.ModelResponded(
            **r,
            agent="coder",
            turn=0,
            text="I read\x00 it",
            tool_calls=[{"id": "c1", "name": "read_file", "args": {"path\x00": "a\x00.bin"}}],
            usage={"total": 10, "prompt": 8, "completion": 2},
        ),
        ev.ToolDispatched(**r, agent="coder", tool="read_file", call_id="c1", args={"p": "\x00"}),
        ev.ToolReturned(**r, agent="coder", tool="read_file", call_id="c1", result=BYTES),
        ev.ToolReturned(
            **r,
            agent="coder",
            tool="run_tests",
            error={"type": "RuntimeError\x00", "message": "exited\x00 137"},
        ),
        ev.MessageSent(
            **r,
            sender="coder",
            recipient="reviewer",
            task_id="T1",
            performative="request",
            payload={"text": "see\x00this", "\x00": [BYTES]},
        ),
        ev.DeadLettered(
            **r, task_id="T1", letter_id="dl-nul", reason="poison\x00", last_error=BYTES
        ),
        ev.ConflictParked(
            **r,
            conflict_id="c-nul",
            subject="order:1",
            predicate="status\x00",
            conflict_type="state",
            claims=[{"value": "paid\x00"}, {"value": BYTES, "evidence": {"\x00": 1}}],
            commit={"stream": "order-1", "from\x00": 1},
        ),
        ev.AgentNudged(**r, agent="coder", turn=1, text="use a\x00 tool"),
        ev.RunInconclusive(**r, agent="coder", turn=2, reason="drift\x00"),
        ev.TurnCapReached(**r, agent="coder", max_turns=3),
        ev.RunInterrupted(**r, by="ann", reason="lunch\x00"),
    ]
    return [(f"run-{RUN}", run)]


@pytest.fixture(params=["sqlite", "postgres"])
def store(request):
    """The run appended to the "default" database, SQLite or PostgreSQL, and caught up."""
    if request.param == "postgres":
        request.getfixturevalue("postgresql")
    appended = []
    store = DjangoJournal()
    for stream, events in journal():
        appended += store.append(stream, events, 0)
    claim = Claims(store).claim(
        "order:1", "status", BYTES, 1, "coder", "model", {"read\x00": BYTES}, run_id=RUN
    )
    claims = store.read(Claims.stream("order:1"))
    assert store.claims_named(Claims.stream("order:1"), [claim.claim_id], 10**9) == claims[:1]
    appended += [r for r in claims if r.event.run_id == RUN]
    projection.catch_up()
    assert connections["default"].vendor == (
        "sqlite" if request.param == "sqlite" else "postgresql"
    )
    return appended


def addresses() -> list[str]:
    base, api = f"/runs/{RUN}", f"/api/runs/{RUN}"
    found = [f"{base}/", f"{base}/row", f"{base}/header", f"{base}/tail?after=0"]
    found += [f"{base}/?tab={tab}" for tab in TABS] + [f"{base}/tabs/{tab}" for tab in TABS]
    found += [f"{base}/export.jsonl", f"/?q={RUN}", "/metrics", "/search?q=poison"]
    found += ["/review/dead-letters", "/review/conflicts"]
    found += [api, f"{api}/events", f"{api}/export"]
    found += [f"{api}/{part}" for part in ("bill", "threads", "audit", "resume-point")]
    found += [f"{api}/{part}" for part in ("metrics", "findings", "tags")]
    found += [f"/api/runs?q={RUN}", "/api/metrics", "/api/search?q=poison"]
    found += ["/api/review/dead-letters", "/api/review/conflicts"]
    return found


def test_every_address_of_the_run_answers_with_a_replacement_character(store, reviewer, token):
    assert not StoppedView.objects.exists()  # no read model stopped on the run
    browser = client_for(reviewer, raise_request_exception=False)
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}", raise_request_exception=False)
    answers = {}
    for address in addresses():
        client = api if address.startswith("/api/") else browser
        partial = "/tabs/" in address or address.endswith(("/row", "/header", "after=0"))
        answers[address] = client.get(address, headers={"HX-Request": "true"} if partial else {})
    failed = [f"{a}: {r.status_code}" for a, r in answers.items() if r.status_code != 200]
    assert failed == [], failed
    threads = answers[f"/api/runs/{RUN}/threads"].content.decode()
    assert nul.ESCAPE.search(threads) is None and "\\\\u0000" in threads  # the text stays
    assert "see\\ufffdthis" in threads.lower()
    assert "poison\ufffd" in answers["/review/dead-letters"].content.decode()
    assert DeadLetter.objects.get().last_error == BYTES.replace("\x00", "\ufffd")
    conflict = Conflict.objects.get()
    assert conflict.claims[1]["evidence"] == {"\ufffd": 1}
    assert conflict.commit == {"stream": "order-1", "from\ufffd": 1}
    # The journal keeps the events exactly as appended: its export gives them back.
    out = io.StringIO()
    transfer.export(RUN, out)
    appended = "".join(
        flat.dumps(r.event, r.stream, r.version) + "\n"
        for r in sorted(store, key=lambda r: r.position)
    )
    assert out.getvalue() == appended
