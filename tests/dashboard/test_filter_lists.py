"""The timeline's filter lists (kinds and agents a run holds), on every database backend."""

from __future__ import annotations

from dashboard import queries
from journal_store.journal import DjangoJournal
from runtime.events import BudgetDebited, ModelCalled, RunStarted
from tests.journal_store.conftest import on_every_backend

pytestmark = on_every_backend()


def test_each_kind_and_agent_of_a_run_is_offered_once_and_no_other_runs(alias):
    journal = DjangoJournal(alias)
    run = [
        RunStarted(run_id="r-a", agent="coder", task="t"),
        ModelCalled(run_id="r-a", agent="coder", turn=1),
        BudgetDebited(run_id="r-a", agent="reviewer", amount=3),
        ModelCalled(run_id="r-a", agent="reviewer", turn=1),
        BudgetDebited(run_id="r-a", amount=1),  # no agent: not offered
    ]
    journal.append("run-r-a", run, 0)
    journal.append("run-r-b", [RunStarted(run_id="r-b", agent="tester", task="t")], 0)
    assert queries.distinct("r-a", "kind", alias) == ["BudgetDebited", "ModelCalled", "RunStarted"]
    assert queries.distinct("r-a", "agent", alias) == ["coder", "reviewer"]
    assert queries.distinct("r-none", "kind", alias) == []
