"""A fork imported on its own, into a store that does not hold the run it was forked from,
counts the past it copied across runs: the rollup takes it off the fork's share for its
parent's share to count, and with no parent here nobody counted it, even with no filter."""

from __future__ import annotations

import io

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import MetricsDay, RunSummary, StoredEvent
from journal_store.transfer import export, import_journal
from runtime.metric_sums import SUMMED
from services import forks
from services.metrics import MetricsFilter, across
from tests.dashboard.conftest import drive, run_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def first_verdict(run_id: str) -> int:
    return next(
        r.position
        for r in DjangoJournal().read(f"run-{run_id}")
        if r.event.kind == "MessageSent" and r.event.performative.lower() in ("accept", "reject")
    )


def exported(run_id: str) -> bytes:
    out = io.StringIO()
    export(run_id, out)
    return out.getvalue().encode()


@pytest.fixture
def fork_alone(owner) -> tuple[str, bytes]:
    """A fork's journal, exported and imported into an emptied store: its parent is not here
    (its journal is given back, to import later)."""
    parent = run_of("first-flight")
    child = forks.fork_run(parent, first_verdict(parent), forks.Changes(), "owner")
    assert drive(child) != "stepped"
    projection.catch_up()
    journals = exported(parent), exported(child)
    StoredEvent.objects.all().delete()
    projection.rebuild()
    assert not RunSummary.objects.exists()
    import_journal(io.BytesIO(journals[1]))
    projection.catch_up()
    assert list(RunSummary.objects.values_list("run_id", "parent_id")) == [(child, parent)]
    return child, journals[0]


def test_a_fork_without_its_parent_counts_its_copied_past(fork_alone):
    run = RunSummary.objects.get(run_id=fork_alone[0])
    assert 0 < run.inherited_tokens < run.tokens and run.copied_figures["handoffs"] > 0
    # The rollup keeps the fork's own share: its parent's would count the rest.
    assert sum(MetricsDay.objects.values_list("tokens", flat=True)) == (
        run.tokens - run.inherited_tokens
    )
    found = across(MetricsFilter())
    assert found.totals["tokens"] == run.tokens
    assert found.totals["cost"] == pytest.approx(run.cost)
    assert (found.totals["coord_tokens"], found.totals["work_tokens"]) == (
        run.coord_tokens,
        run.work_tokens,
    )
    for name in SUMMED:
        if name != "conflict_wait":
            assert found.totals[name] == getattr(run, name), name
    assert [t["tokens"] for t in found.teams] == [run.tokens]
    assert [p["tokens"] for p in found.periods] == [run.tokens]


def test_its_parent_imported_later_counts_the_copied_past_once(fork_alone):
    child, parents_journal = fork_alone
    import_journal(io.BytesIO(parents_journal))
    projection.catch_up()
    run = RunSummary.objects.get(run_id=child)
    parent = RunSummary.objects.get(run_id=run.parent_id)
    totals = across(MetricsFilter()).totals
    assert totals["tokens"] == parent.tokens + run.tokens - run.inherited_tokens
    assert totals["handoffs"] == parent.handoffs + run.handoffs - run.copied_figures["handoffs"]
