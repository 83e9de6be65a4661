"""Token budgets: a ledger per run, sub-ledgers per agent whose debits also hit the parent.

Budgets are checked at turn boundaries, never mid-turn: a run that ends halted after calls
u_1..u_k against an allowance B spent at most B - 1 + u_k (the overshoot is one call, and only
one), and it stopped in a consistent, resumable state.
"""

from __future__ import annotations

from typing import NamedTuple


class Breach(NamedTuple):
    """A ledger whose limit is reached: its name, what it spent, its allowance, and what of
    that it held back from the agent asking (the reserve, for one that may not use it)."""

    ledger: str
    spent: int
    allowance: int
    held: int = 0


class Budget:
    """A pot of tokens. `reserve` is held back for verification: only budgets allowed to use
    it (`SubBudget(..., may_use_reserve=True)`) can spend the last `reserve` tokens."""

    def __init__(self, allowance: int, name: str = "run", reserve: int = 0) -> None:
        if allowance < 0 or reserve < 0 or reserve > allowance:
            raise ValueError(
                f"budget {name}: need 0 <= reserve <= allowance, got {reserve}, {allowance}"
            )
        self.name = name
        self.allowance = allowance
        self.reserve = reserve
        self.spent = 0
        # What it was opened with: a fork's new allowance (runtime/limits.py) scales from these.
        self.granted = allowance
        self.granted_reserve = reserve

    @property
    def remaining(self) -> int:
        return self.allowance - self.spent

    def debit(self, amount: int) -> None:
        self.spent += amount

    def exhausted(self, may_use_reserve: bool = True) -> bool:
        return self.breached(may_use_reserve) is not None

    def breached(self, may_use_reserve: bool = True) -> Breach | None:
        """The ledger whose limit is reached (its allowance, less the reserve for one that may
        not use it); None while none is."""
        held = 0 if may_use_reserve else self.reserve
        if self.spent < self.allowance - held:
            return None
        return Breach(self.name, self.spent, self.allowance, held)


class Share(Budget):
    """An agent's own allowance, kept on its own stream apart from the run's pot: a triage
    specialist's `max_tokens`, the part of the run's allowance its hand-off gave it. Named
    after its agent, so that a breach is told as that agent's, never as the run's. Like a
    SubBudget's, a share spent on the turn its agent finishes halts nobody (the agent stops
    there anyway): its report stands, and the harness says it is over (runtime/overspent.py)."""


class SubBudget(Budget):
    """An agent's share of a parent budget. Its debits hit the parent too; exhausting it halts
    only its own agent, while the parent and the siblings stand."""

    def __init__(
        self, parent: Budget, allowance: int, name: str, may_use_reserve: bool = False
    ) -> None:
        super().__init__(allowance, name)
        self.parent = parent
        self.may_use_reserve = may_use_reserve

    def debit(self, amount: int) -> None:
        super().debit(amount)
        self.parent.debit(amount)

    def breached(self, may_use_reserve: bool = True) -> Breach | None:
        # The parent's first: a breach of the run's allowance ends the run, where the agent's
        # own share ends only the agent, so it is what a halt is told by when both are spent.
        parent = self.parent.breached(self.may_use_reserve and may_use_reserve)
        if parent is not None:
            return parent
        return super().breached()
