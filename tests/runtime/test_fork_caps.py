"""A fork's turn cap and allowance apply from its fork point on, wherever it is: the prefix
replays under the parent's caps, the new ones are journalled where they take effect, and the
fork replays identical."""

from __future__ import annotations

import shutil

import pytest

from runtime import flight, fork, streams, views
from runtime.events import BudgetAllocated, BudgetExhausted, RunStarted, TurnCapReached
from runtime.jsonl import JsonlJournal
from tests.runtime.test_fork import fork_and_fly, position_of

pytestmark = pytest.mark.slow


def copied(flown, tmp_path):
    path = tmp_path / "j.jsonl"
    shutil.copy(flown.path, path)
    return path, flown.run_id, flown.path.parent


def events_of(journal, run_id):
    return [r.event for r in journal.read(streams.journal(run_id))]


def test_more_allowance_before_the_halt_lets_a_starved_coder_finish(fly_team, tmp_path):
    flown = fly_team("budget-starved")
    assert flown.outcome.status == "halted"
    path, run_id, root = copied(flown, tmp_path)
    journal = JsonlJournal(path)
    parent_events = events_of(journal, run_id)
    [halt] = [e for e in parent_events if isinstance(e, BudgetExhausted)]
    # The last event before the halt: the debit of the coder's last turn.
    at = position_of(
        journal,
        run_id,
        "BudgetDebited",
        halt.agent,
        n=sum(1 for e in parent_events if e.kind == "BudgetDebited" and e.agent == halt.agent),
    )
    journal, _, outcome = fork_and_fly(
        path, run_id, "r-richer", at, root, fork.Changes(allowance=5_000)
    )
    mine = events_of(journal, "r-richer")
    assert not any(isinstance(e, BudgetExhausted) for e in mine)
    assert outcome.status == "done", outcome.reason
    forked_at = next(i for i, e in enumerate(mine) if e.kind == "RunForked")
    resized = {e.name: e for e in mine[forked_at:] if isinstance(e, BudgetAllocated)}
    assert resized["run"].allowance == 5_000
    # Each agent's share is the fraction of the new pot it had of the old one.
    for e in parent_events:
        if isinstance(e, BudgetAllocated) and e.name in resized and e.parent == "run":
            assert resized[e.name].allowance == e.allowance * 5_000 // 400
    assert halt.agent in resized
    bill = views.bill(flight.run_records(journal, "r-richer"))
    assert bill["allowance"] == 5_000 and bill["ledgers"]["run"]["allowance"] == 5_000
    assert flight.replay(journal, "r-richer").identical


def test_a_lower_turn_cap_mid_run_stops_the_agent_at_the_new_cap(fly_team, tmp_path):
    path, run_id, root = copied(fly_team("first-flight"), tmp_path)
    journal = JsonlJournal(path)
    # After the coder's second answer: it has taken two turns under the parent's cap of 12.
    at = position_of(journal, run_id, "BudgetDebited", "coder", n=2)
    journal, _, outcome = fork_and_fly(path, run_id, "r-short", at, root, fork.Changes(max_turns=2))
    mine = events_of(journal, "r-short")
    capped = [e for e in mine if isinstance(e, TurnCapReached)]
    assert capped and (capped[0].agent, capped[0].max_turns) == ("coder", 2)
    assert outcome.status == "escalated"  # the coder did not finish in its turns
    # The coder's RunStarted, in the prefix, still says the parent's cap; an agent started
    # after the fork point starts under the new one.
    forked_at = next(i for i, e in enumerate(mine) if e.kind == "RunForked")
    before = [e for e in mine[:forked_at] if isinstance(e, RunStarted)]
    after = [e for e in mine[forked_at:] if isinstance(e, RunStarted)]
    assert before and all(e.max_turns == 12 for e in before)
    assert after and all(e.max_turns == 2 for e in after)  # the re-asked coder
    assert flight.replay(journal, "r-short").identical


def test_a_fork_keeps_its_parents_caps_in_its_settings(fly_team, tmp_path):
    path, run_id, root = copied(fly_team("first-flight"), tmp_path)
    journal = JsonlJournal(path)
    at = position_of(journal, run_id, "BudgetDebited", "coder", n=1)
    changes = fork.Changes(allowance=900, max_turns=3)
    journal, planned, _ = fork_and_fly(path, run_id, "r-caps", at, root, changes)
    started = events_of(journal, "r-caps")[0]
    assert (started.config["allowance"], started.config["max_turns"]) == (5_000, 12)
    assert planned.forked.changes == {"allowance": 900, "max_turns": 3}
    assert flight.replay(journal, "r-caps").identical
