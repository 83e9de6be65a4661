"""A query on a PostgreSQL connection that has gone silent fails, where it waited until TCP
gave up (about 15 minutes) or, the query once acknowledged, for good: a worker's step, a page
or the beat's round held that long. The connection is Django's, its settings config/env.py's;
the silence is a network namespace's loopback taken down (tests/silent_database.py)."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from django.conf import settings

from tests import silent_database
from tests.conftest import need_postgres

pytestmark = pytest.mark.slow

# Minutes' bounds are 30 s of quiet before a probe and a minute unheard
# (test_database_url.py); these are the same settings, shorter, so the test takes seconds.
SHORT = {
    "keepalives": "1",
    "keepalives_idle": "1",
    "keepalives_interval": "1",
    "keepalives_count": "2",
    "tcp_user_timeout": "3000",
}


# libpq's words for each: a connection whose TCP gave up while connecting reads to it as one
# its server closed.
SAID = {
    "unacknowledged": "timed out",
    "acknowledged": "timed out",
    "unreachable": "server closed the connection unexpectedly",
}


@pytest.fixture
def server_url() -> str:
    need_postgres()
    if not silent_database.namespaces_work():
        pytest.skip("this machine does not let a process make a network namespace (unshare -n)")
    db = settings.DATABASES["postgres"]
    password = f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else ""
    who = f"{quote(db['USER'], safe='')}{password}@" if db.get("USER") else ""
    return f"postgres://{who}{db['HOST']}:{db['PORT']}/{quote(db['NAME'])}"


@pytest.mark.parametrize("case", silent_database.CASES)
def test_a_query_on_a_connection_gone_silent_fails_and_says_so(server_url, case):
    # Without config/env.py's bound on the connection, the query is still waiting when the
    # test gives up on it (SILENCE_BOUND left out of OPTIONS: {"raised": None}).
    found = silent_database.run(server_url, case, wait=60, bound=SHORT)
    if found["raised"] == "skipped":
        pytest.skip(found["said"])
    assert found["raised"] == "OperationalError", found
    assert SAID[case] in found["said"], found


def test_a_new_connection_to_a_host_gone_silent_gives_up_at_its_own_bound(server_url):
    # TCP's user timeout bounds a connection's first packets too (the case above, in 3 s);
    # connect_timeout gives up on a new connection sooner, without it: a page's or a step's
    # next connection, once the last was given up, is told in 10 s, not a minute.
    alone = {**SHORT, "tcp_user_timeout": "0", "keepalives": "0", "connect_timeout": "2"}
    found = silent_database.run(server_url, "unreachable", wait=60, bound=alone)
    if found["raised"] == "skipped":
        pytest.skip(found["said"])
    assert found["raised"] == "OperationalError", found
    assert "timeout expired" in found["said"], found


def test_a_query_slower_than_the_bound_on_a_live_connection_is_not_cut_short(server_url):
    # The server's kernel answers the probes while the query runs (docs/journal.md says so):
    # a bound that cut long queries would fail every slow model step's writes.
    found = silent_database.run(server_url, "slow", wait=60, bound=SHORT)
    assert found["raised"] == "nothing", found
    assert found["seconds"] >= silent_database.SLOW > int(SHORT["tcp_user_timeout"]) / 1000
