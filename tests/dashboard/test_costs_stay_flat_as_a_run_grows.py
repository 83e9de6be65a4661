"""A step costs what its turn costs, and every page, poll and API read of a run what it shows,
however long the run has grown: the work of each at 3,000 events is within 1.5x of its work at
200 (issue #15's bound).

The work is counted, not timed (the suite asserts no time): the steps of SQLite's virtual
machine (a progress handler called at every one) and the functions Python calls (a profile
hook), which no load on the machine moves. The steps are driven as a worker drives them, one
turn each, warm (the run's flight kept on the worker) and cold from the loop's latest snapshot;
five at a time, a snapshot's cycle, so that each five write one snapshot and replay as much.
The pages and polls are bench/long_run.py's, which times them at 100 and 20,000 events; the
API's reads of a run are read as a script pages them. A read that grows with the run shows
here as it did there: the run's first dead letter, asked of its stream, read every event of it
on each timeline page and poll (92da0212)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from django.db import connection
from django.test import Client

from bench import long_run
from journal_store.models import StoredEvent
from runtime import flight, snapshots
from tests.work import work_of

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
]  # steps renew leases on a connection of their own
SIZES = (200, 3_000)
SNAPSHOT_TURNS = snapshots.EVERY  # as shipped
BOUND = 1.5


def step_work(settings, run_id: str) -> dict[str, Callable[[], object]]:
    """Five steps of one turn each, cold from the loop's latest snapshot and warm."""
    from services import steps

    def five(warm: bool) -> None:
        settings.WARM_RUNS = 4 if warm else 0
        for _ in range(SNAPSHOT_TURNS):
            assert steps.drive_step(run_id, "ann") == "stepped"
        steps.WARM.clear()

    return {
        "5 steps, cold from a snapshot": lambda: five(False),
        "5 steps, warm": lambda: five(True),
    }


def api_work(client: Client, run_id: str) -> dict[str, Callable[[], object]]:
    """The API's reads of the run, as a script signed in asks them (its last page of events)."""
    last = StoredEvent.objects.filter(run_id=run_id).order_by("-position")[0].position
    reads = {
        "API run": "",
        "API events, the last page": f"/events?after={last - 50}&limit=50",
        "API threads, a page": "/threads?limit=50",
        "API audit, a page": "/audit?limit=50",
        "API bill": "/bill",
        "API findings": "/findings",
        "API resume point": "/resume-point",
    }
    work: dict[str, Callable[[], object]] = {}
    for name, tail in reads.items():

        def get(url: str = f"/api/runs/{run_id}{tail}") -> None:
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code, response.content)

        work[name] = get
    return work


@pytest.fixture
def long_runs(
    nowhere, settings, django_user_model
) -> Iterator[dict[int, dict[str, Callable[[], object]]]]:
    """A run of each size, of the bench's shape (a coder reading a file turn after turn), and
    each page and poll of it as a signed-in person's htmx request."""
    settings.STEP_TURNS, settings.SNAPSHOT_TURNS = 1, SNAPSHOT_TURNS
    # The turns the run is grown by, and as many again for the steps measured.
    long_run.register_scenario(max(SIZES) // long_run.TURN_EVENTS + 100)
    try:
        client = Client()
        client.force_login(django_user_model.objects.create_superuser("ann", "a@example.com", "x"))
        works = {}
        for size in SIZES:
            run_id = long_run.new_run(max(SIZES) // long_run.TURN_EVENTS + 90)
            long_run.grow(run_id, size)
            works[size] = {
                **long_run.page_work(client, run_id),
                **long_run.steering_work(run_id),
                **api_work(client, run_id),
                **step_work(settings, run_id),
            }
        yield works
    finally:
        flight.team_named("solo").scenarios.pop(long_run.SCENARIO, None)


def test_a_step_a_page_a_poll_and_an_api_read_do_as_much_at_3000_events_as_at_200(long_runs):
    assert connection.vendor == "sqlite"
    short, long = (long_runs[size] for size in SIZES)
    counted = {name: (work_of(short[name]), work_of(long[name])) for name in short}
    grown = {
        f"{name}, {what}": f"{a[i]:,} -> {b[i]:,}"
        for name, (a, b) in counted.items()
        for i, what in enumerate(("SQLite's steps", "Python's calls"))
        if b[i] > BOUND * a[i]
    }
    assert not grown, grown
