"""Work run in separate processes (spawned, so each sets up Django afresh on the test database)."""

from __future__ import annotations

import os
import time
from typing import Any

from django.db import connections


def env_for(alias: str) -> dict[str, str]:
    """Environment that points a fresh process at the test database `alias` uses now."""
    name = connections[alias].settings_dict["NAME"]
    if alias == "default":
        return {"DATABASE_URL": f"sqlite:///{name}"}  # an absolute path: four slashes
    url = os.environ["MINUTES_TEST_POSTGRES_URL"].rsplit("/", 1)[0] + f"/{name}"
    return {"MINUTES_TEST_POSTGRES_URL": url}


# How long the spawned processes of one test get, all told, before they are taken for hung: a
# guard, not a measure. Each sets Django up afresh (a few seconds idle), and on a CI box busy
# with the rest of the suite four of them outlasted a 60 s join.
HUNG_AFTER = 300.0


def exit_codes(procs: list[Any], within: float = HUNG_AFTER) -> list[int | None]:
    """Wait for the processes to end, within one deadline for them all; one still running then
    is killed (so it outlives no test) and its exit code is None."""
    deadline = time.monotonic() + within
    codes = []
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
        if p.exitcode is None:
            p.kill()
            p.join(5)
            codes.append(None)
        else:
            codes.append(p.exitcode)
    return codes


def setup(env: dict[str, str]) -> None:
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def race(env: dict[str, str], alias: str, barrier: Any, results: Any, i: int) -> None:
    setup(env)
    from journal_store.journal import DjangoJournal
    from runtime.events import BudgetDebited
    from runtime.journal import WrongExpectedVersion

    journal = DjangoJournal(alias)
    barrier.wait()
    try:
        journal.append("run-race", [BudgetDebited(run_id="race", amount=i)], 0)
        results.put(("won", i))
    except WrongExpectedVersion:
        results.put(("lost", i))


def write_many(env: dict[str, str], alias: str, stream: str, count: int) -> None:
    """Append `count` events to one stream, one transaction each."""
    setup(env)
    from journal_store.journal import DjangoJournal
    from runtime.events import BudgetDebited

    journal = DjangoJournal(alias)
    for n in range(count):
        journal.append(stream, [BudgetDebited(run_id="order", amount=n)], n)
