"""The timeline leaves out the driving's lease and import streams unless asked (`infra`), by
their names' prefixes read in byte order, as the journal's prefix reads take streams: SQLite's
LIKE is blind to ASCII case, so a stream named `LEASE-...` that carried the run's events was
hidden as if it were the run's lease, and a run id holding `%` or `_` could not widen it."""

from __future__ import annotations

import pytest

from dashboard import queries
from journal_store.journal import DjangoJournal
from runtime.events import AgentFinished, TeamStarted

pytestmark = pytest.mark.django_db

RUN = "r-0123456789ab"


def test_only_the_named_infrastructure_streams_are_left_out() -> None:
    journal = DjangoJournal()
    journal.append(f"run-{RUN}", [TeamStarted(run_id=RUN, team="solo", scenario="s", task="t")], 0)
    for stream in ("lease-run-x", "import-7", "LEASE-run-x", "Import-7", "lease_run", "leases"):
        journal.append(stream, [AgentFinished(run_id=RUN, agent=stream)], 0)

    shown = {row.stream for row in queries.events(RUN, infra=False)}
    everything = {row.stream for row in queries.events(RUN, infra=True)}

    assert shown == {f"run-{RUN}", "LEASE-run-x", "Import-7", "lease_run", "leases"}
    assert everything == shown | {"lease-run-x", "import-7"}
