"""Every page, poll and API read of a run costs what it shows, however long the run has grown: the work
SQLite does for each at 3,000 events is within 1.5x of its work at 200 (issue #15's bound).

The work is counted in steps of SQLite's virtual machine (a progress handler called at every
one), which no load on the machine moves, where a time would; the suite asserts no time. The
pages and polls are bench/long_run.py's, which times them at 100 and 20,000 events; the API's
reads of a run are read as a script pages them. A read
that grows with the run shows here as it did there: the run's first dead letter, asked of its
stream, read every event of it on each timeline page and poll (92da0212)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from django.db import connection
from django.test import Client

from bench import long_run
from journal_store.models import StoredEvent
from runtime import flight

pytestmark = [pytest.mark.django_db, pytest.mark.slow]
SIZES = (200, 3_000)
BOUND = 1.5


def steps(work: Callable[[], object]) -> int:
    """The steps SQLite's virtual machine takes for `work`, on this thread's connection."""
    counted = [0]

    def tick() -> int:
        counted[0] += 1
        return 0

    work()  # as a person's second look finds it: Django's and SQLite's caches warm
    connection.ensure_connection()
    connection.connection.set_progress_handler(tick, 1)
    try:
        work()
    finally:
        connection.connection.set_progress_handler(None, 1)
    return counted[0]


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
def long_runs(nowhere, django_user_model) -> Iterator[dict[int, dict[str, Callable[[], object]]]]:
    """A run of each size, of the bench's shape (a coder reading a file turn after turn), and
    each page and poll of it as a signed-in person's htmx request."""
    long_run.register_scenario(max(SIZES) // long_run.TURN_EVENTS + 20)
    try:
        client = Client()
        client.force_login(django_user_model.objects.create_superuser("ann", "a@example.com", "x"))
        works = {}
        for size in SIZES:
            run_id = long_run.new_run(max(SIZES) // long_run.TURN_EVENTS + 10)
            long_run.grow(run_id, size)
            works[size] = {
                **long_run.page_work(client, run_id),
                **long_run.steering_work(run_id),
                **api_work(client, run_id),
            }
        yield works
    finally:
        flight.team_named("solo").scenarios.pop(long_run.SCENARIO, None)


def test_every_page_and_poll_reads_as_much_at_3000_events_as_at_200(long_runs):
    assert connection.vendor == "sqlite"
    short, long = (long_runs[size] for size in SIZES)
    counted = {name: (steps(short[name]), steps(long[name])) for name in short}
    grown = {name: f"{a:,} -> {b:,}" for name, (a, b) in counted.items() if b > BOUND * a}
    assert not grown, grown
