"""A worker whose clock is off the database's by a sizable part of a lease says so at its start,
with what it risks and how to fix it: leases are judged by the readers' clocks."""

from __future__ import annotations

from django.db import connections

from services.clocks import clock_problem, skew
from tests.conftest import on_every_backend


def test_a_clock_off_the_databases_by_a_tenth_of_a_lease_is_said_with_what_it_risks():
    assert clock_problem(None, 30) is None  # SQLite: one machine, one clock
    assert clock_problem(2.9, 30) is None
    said = clock_problem(-12.0, 30)
    assert said is not None and said.startswith("this worker's clock is 12.0 s ahead of")
    assert "past 20 s of difference a live worker's run is handed to another" in said
    assert "NTP" in said
    assert "behind the database's" in clock_problem(4.0, 30)


@on_every_backend()
def test_the_difference_is_read_from_a_postgresql_server_and_not_asked_of_sqlite(alias):
    difference = skew(alias)
    if connections[alias].vendor == "postgresql":
        # One machine here: the server's clock is this one's, up to a round trip.
        assert isinstance(difference, float) and clock_problem(difference, 30) is None
    else:
        assert difference is None
