"""A triage run whose specialist's model endpoint is down for a while (503s past the client's
retries, three starts in a row, more than its restarts) and then answers finishes with every
sub-task done: the starts that met the outage are not counted toward the specialist's restarts,
and it is started again after a wait, by the rule a failed step of the run waits by. It used to
be given up within seconds ("gave up after 3 starts"), the run degraded for good by a vendor's
five bad minutes."""

from __future__ import annotations

import json
import re
import time

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import DeadLetter
from runtime import flight
from runtime.events import LeaseReleased
from runtime.fanout.restarts import MAX_RESTARTS
from services import runs, specialists, steps
from services.control import Control
from tests.dashboard.conftest import client_for, drive, make_user
from tests.fakellm import Reply, completion, wire_call

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.usefixtures("nowhere"),  # tests/conftest.py: the test drives each step
]

TRIES = 5  # the client's requests before it gives up on a call (max_retries=4)
DOWN_FOR = 1 + MAX_RESTARTS  # starts: as many as used to give the sub-task up


@pytest.fixture
def down_for_a_while(server, settings, monkeypatch):
    """The kb-worker's model endpoint: 503 ("try again now") for DOWN_FOR starts, then a
    search and a report citing it. The other specialists are scripted."""
    settings.MODELS = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "some-model"}
    settings.MODEL_BASE_URL = server.url
    # The waits between its starts, as short as a test can take them (they are a minute at
    # most on the workers); their length is tests/runtime/test_fanout_restarts.py's business.
    monkeypatch.setattr(steps, "MAX_BACKOFF", 0.05)
    report = {
        "worker_id": "kb-worker",
        "status": "ok",
        "findings": [
            {
                "claim": "KB-104: damaged items are refunded when reported within 14 days.",
                "source_call_id": "c1",
                "source_tool": "kb.search",
            }
        ],
    }
    server.queue(
        *[Reply(b"overloaded", 503, {"Retry-After": "0"})] * (TRIES * DOWN_FOR),
        # With the usage a server reports: estimated (none reported), the two calls came to
        # more than the specialist's allowance of 1,250, and its report on the turn that
        # spent it would not be taken (a hard ceiling), which is not what this test is about.
        Reply(
            completion(
                None,
                [wire_call("kb.search", '{"query": "damaged item"}', "c1")],
                usage={"prompt_tokens": 450, "completion_tokens": 15},
            )
        ),
        Reply(
            completion(
                None,
                [wire_call("done", json.dumps(report), "c2")],
                usage={"prompt_tokens": 620, "completion_tokens": 40},
            )
        ),
    )
    return server


def test_a_specialists_outage_is_waited_out_and_the_run_finishes_with_its_sub_tasks_done(
    down_for_a_while, monkeypatch
):
    sent: list[str] = []
    monkeypatch.setattr(specialists, "dispatch", lambda run, sub, handoff: sent.append(sub))
    run_id = runs.start_run(
        "support-triage", "broken-policy", by="owner", models={"kb-worker": "endpoint"}
    )
    owner = client_for(make_user("owner"))
    shown = []  # what the run's header and the API said while S2's endpoint was down
    listed = []  # and the runs list, and its row as it polls

    started: list[tuple[str, str]] = []
    outcome = drive(run_id)
    for _ in range(400):
        if outcome != "waiting":
            break
        while sent:  # each started once, as a worker takes the task off the queue
            sub = sent.pop(0)
            started.append((sub, specialists.run_specialist(run_id, sub, "test-worker")))
            if started[-1] == ("S2", "endpoint down"):
                assert Control(run_id).open_letter() is None  # waited out, not given up
                projection.catch_up()
                header = owner.get(f"/runs/{run_id}/header").content.decode()
                [down] = owner.get(f"/api/runs/{run_id}").json()["specialists_down"]
                shown.append((header, down))
                listed.append(owner.get("/").content.decode())
                listed.append(owner.get(f"/runs/{run_id}/row").content.decode())
        time.sleep(0.01)  # the run's next look at its specialists, a moment later
        outcome = drive(run_id)

    assert outcome == "done", outcome
    # While it was down, the header said so (where it said only "running"), and the API.
    assert len(shown) == DOWN_FOR
    for n, (header, down) in enumerate(shown, 1):
        assert 'Specialist <span class="mono" hx-disable>S2</span>' in header
        assert "its model endpoint has not answered since" in header
        assert (
            f"({n} start{'s' if n > 1 else ''}); the last time: <q hx-disable>EndpointDown"
            in header
        )
        assert (down["sub_id"], down["worker_id"], down["starts"]) == ("S2", "kb-worker", n)
        assert down["last"].startswith("EndpointDown: ") and "HTTP 503" in down["last"]
        assert down["until"] > down["since"]
    # The runs list's badge too, naming the specialist, where it showed only "running".
    assert len(listed) == 2 * DOWN_FOR
    for html in listed:
        [badge] = re.findall(r'<span class="badge failed" title="([^"]*)">model down</span>', html)
        assert "the model endpoint of its specialist S2 does not answer since" in badge
        assert "the last start said: EndpointDown: " in badge and "HTTP 503" in badge
    projection.catch_up()
    assert owner.get(f"/api/runs/{run_id}").json()["specialists_down"] == []
    assert "model down" not in owner.get(f"/runs/{run_id}/header").content.decode()
    assert "model down" not in owner.get("/").content.decode()
    assert [s for s in started if s[0] == "S2"] == [
        *[("S2", "endpoint down")] * DOWN_FOR,
        ("S2", "ok"),
    ]
    assert len(down_for_a_while.requests) == TRIES * DOWN_FOR + 2
    journal = DjangoJournal()
    kinds = [r.event.kind for r in journal.read(f"run-{run_id}")]
    assert "WorkerTimedOut" not in kinds and "TaskEscalated" not in kinds
    projection.catch_up()
    assert not DeadLetter.objects.filter(run_id=run_id).exists()
    # Each start that met the outage says so in its lease's release, as the timeline shows it.
    releases = [
        r.event.outcome
        for r in journal.read_prefix(f"lease-worker-{run_id}-S2-")
        if r.event.kind == "LeaseReleased"
    ]
    assert [o.split(":")[0] for o in releases] == ["EndpointDown"] * DOWN_FOR + [""]
    # With what the endpoint asked us to wait (its Retry-After: 0), from which the next start
    # is timed (tests/runtime/test_fanout_restarts.py).
    asked = [
        r.event.retry_after
        for r in journal.read_prefix(f"lease-worker-{run_id}-S2-")
        if isinstance(r.event, LeaseReleased)
    ]
    assert asked == [0.0] * DOWN_FOR + [None]
    assert flight.replay(journal, run_id).identical
