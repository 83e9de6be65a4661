"""The runs list's "model down" for fan-out runs whose specialists wait out their endpoint:
read for a whole page of runs by the same few queries, however many runs fan out."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from journal_store.journal import DjangoJournal
from runtime import streams
from runtime.coordination.leases import Leases
from runtime.events import LeaseGranted, LeaseReleased, WorkerHandedOff, WorkerReported
from services.specialists import endpoints_down

pytestmark = pytest.mark.django_db


def fan_out(run_id: str, subs: dict[str, str]) -> None:
    """A run that handed sub-tasks to specialists: `subs` says what became of each one's last
    start ("down": its endpoint failed it; "reported": it finished; "at work": it holds its
    lease)."""
    journal = DjangoJournal()
    briefs = [
        WorkerHandedOff(run_id=run_id, task_id=sub, handoff={"worker_id": "w1"}) for sub in subs
    ]
    reports = [
        WorkerReported(run_id=run_id, task_id=sub, report={"status": "done"})
        for sub, became in subs.items()
        if became == "reported"
    ]
    journal.append(streams.journal(run_id), [*briefs, *reports], 0)
    for sub, became in subs.items():
        resource = streams.worker(run_id, sub, "w1")
        lease = [LeaseGranted(run_id=run_id, resource=resource, holder="h", expires=9e9)]
        if became in ("down", "reported"):
            outcome = "EndpointDown: 503 from the model endpoint" if became == "down" else "done"
            lease.append(
                LeaseReleased(
                    run_id=run_id, resource=resource, holder="h", epoch=1, outcome=outcome
                )
            )
        journal.append(Leases.stream(resource), lease, 0)


def queries_for(run_ids: list[str]) -> tuple[int, dict]:
    with CaptureQueriesContext(connection) as captured:
        found = endpoints_down(run_ids)
    return len(captured), found


def test_the_queries_do_not_grow_with_the_runs_that_fan_out():
    fan_out("r-0", {"s1": "down", "s2": "reported"})
    one, found = queries_for(["r-0"])
    assert {run: [d.sub_id for d in downs] for run, downs in found.items()} == {"r-0": ["s1"]}

    for n in range(1, 6):
        fan_out(f"r-{n}", {"s1": "down", "s2": "at work", "s3": "down", "s4": "reported"})
    fan_out("r-calm", {"s1": "at work", "s2": "reported"})
    runs = [f"r-{n}" for n in range(6)] + ["r-calm", "r-none"]
    many, found = queries_for(runs)
    assert many == one, (one, many)
    assert {run: sorted(d.sub_id for d in downs) for run, downs in found.items()} == {
        "r-0": ["s1"],
        **{f"r-{n}": ["s1", "s3"] for n in range(1, 6)},
    }
    down = found["r-3"][0]
    assert down.worker_id == "w1" and down.last.startswith("EndpointDown: 503")
