"""A fork's turn cap and allowance, in force from its fork point on (see runtime/fork.py).

A fork's prefix must replay exactly as the parent recorded it, so its settings keep the
parent's caps and the new ones ride on its RunForked. The session takes them when its cursor
passes that event, at the same place on every resume and replay; the agent loop asks here for
the cap of each turn and has its ledgers resized (journalled as BudgetAllocated) before it
spends or stops on them. An agent already halted or out of turns in the prefix stays so: the
fork changes what happens after its point, not what the parent did before it.
"""

from __future__ import annotations

from typing import Any

from runtime.budget import Budget, SubBudget


class Limits:
    def __init__(self) -> None:
        self.max_turns: int | None = None
        self.allowance: int | None = None
        self.run_cap: int | None = None  # the parent's run-wide turn cap
        self.resized: set[int] = set()  # ids of the budgets already given the new allowance

    def take(self, changes: dict[str, Any], run_cap: Any) -> None:
        """A RunForked's changes: the caps it sets (ints checked when the fork was made)."""
        turns, allowance = changes.get("max_turns"), changes.get("allowance")
        self.max_turns = turns if isinstance(turns, int) else None
        self.allowance = allowance if isinstance(allowance, int) else None
        self.run_cap = run_cap if isinstance(run_cap, int) else None

    def turn_cap(self, cap: int) -> int:
        """An agent's cap: the fork's when the agent had the run's (a harness's own, narrower
        cap for one agent — a bidder's single turn — stays)."""
        if self.max_turns is None or cap != self.run_cap:
            return cap
        return self.max_turns

    def rescale(self, budget: Budget) -> list[Budget]:
        """Give the run's pot the fork's allowance, and an agent's share the same fraction of
        it as it had of the parent's; each budget once. The budgets changed, pot first."""
        if self.allowance is None:
            return []
        root = budget.parent if isinstance(budget, SubBudget) else budget
        changed = []
        for ledger in (root, budget) if root is not budget else (root,):
            if id(ledger) in self.resized:
                continue
            self.resized.add(id(ledger))
            if ledger is root:
                reserve = ledger.granted_reserve * self.allowance // max(ledger.granted, 1)
                ledger.allowance, ledger.reserve = self.allowance, min(reserve, self.allowance)
            else:
                ledger.allowance = max(1, ledger.granted * self.allowance // max(root.granted, 1))
            changed.append(ledger)
        return changed
