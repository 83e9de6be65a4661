"""Where a spent allowance ends an agent's run: the hard ceiling on tokens (docs/workers.md, "Hard
ceilings"), held at every turn boundary, before any further model call or effect.

The agent loop (runtime/loop.py) looks at its budget at four places: after a turn's calls (as
it always has), before each turn's model call (a run whose pot another agent spent is not
asked again), after a failed call whose unusable reply was paid for (its turn ends there), and
on a `done`. A breach on a `done` turn is the one to decide: the turn's other calls ran (a
reply's calls are all run, so one call's overshoot is the most a run spends past its
allowance), but the agent's report is acted on by the harness only after the turn, and that is
past the boundary: merging a candidate, sending a verdict, starting the next agent. So the
breaching turn's `done` is not taken: the agent halts (BudgetExhausted, its report kept in its
ModelResponded), and nothing it asked for happens. Taking it would let a run that broke its
ceiling do its most consequential effect (an integration into main) on the strength of the
call that broke it. That is the run's ceiling: an agent's own share of it (a SubBudget), spent
on the turn it finishes, halts only that agent, which stops there anyway, so its `done` stands
and the run goes on within its allowance, as a share has always been kept. So is a `Share`, an
agent's allowance kept on its own stream (a triage specialist's): the work was done and paid
for, so its report goes to the harness, which marks it as over (`over`).

Inside a journal's record, each place but the first stops where the record stops: a journal
written before these looks replays (and resumes) as it ran.
"""

from __future__ import annotations

from typing import Any

from runtime.budget import Breach, Budget, Share, SubBudget
from runtime.events import MAX_INT, BudgetAllocated, BudgetExhausted
from runtime.session import Session


def halts(session: Session, budget: Budget, finishing: bool = False) -> bool:
    """Whether `budget` stops the agent here: live, when a ledger's allowance is spent (a
    fork's, from its point on, first), and, `finishing` (on a done), when it is the run's;
    inside the record, when the record stops here."""
    if session.live or isinstance(session.peek(), BudgetAllocated):
        session.resize(budget)  # a fork made just before here gives its allowance first
    breach = budget.breached()
    if breach is None:
        return False
    if finishing and isinstance(budget, SubBudget) and breach.ledger == budget.name:
        return False  # only the agent's own share: it stops here anyway
    if finishing and isinstance(budget, Share):
        # Its own share too; a journal written while a specialist's share was named "run"
        # (the run's ceiling, so its done was not taken) replays its halt as it was.
        return not session.live and isinstance(session.peek(), BudgetExhausted)
    return session.live or isinstance(session.peek(), BudgetExhausted)


def over(budget: Budget) -> Breach | None:
    """The agent's own share, when it is spent (a Share, or a SubBudget's own ledger): what a
    report given on the turn that spent it is marked with; None otherwise."""
    breach = budget.breached()
    if breach is None or breach.ledger != budget.name:
        return None
    return breach if isinstance(budget, Share | SubBudget) else None


def exhausted(session: Session, budget: Budget, at: dict[str, Any]) -> BudgetExhausted:
    """The BudgetExhausted that halts the agent: the spent ledger, its name and figures; as v1
    wrote it (the agent's own figures) where the record holds one of those here."""
    # Told as at most MAX_INT: a sum past it (two calls reporting 2**40, before a call's usage
    # was bounded) was an event no journal takes, and the run stayed unended at every resume.
    recorded = session.peek()
    if isinstance(recorded, BudgetExhausted) and recorded.ledger is None:
        own = min(budget.spent, MAX_INT)
        return session.new(BudgetExhausted, **at, spent=own, allowance=budget.allowance)
    breach = budget.breached() or Breach(budget.name, budget.spent, budget.allowance)
    if isinstance(budget, Share) and isinstance(recorded, BudgetExhausted) and recorded.ledger:
        # A specialist's share was named "run" before it was named after its agent: the same
        # ledger, written as it was (its figures are the share's either way).
        breach = breach._replace(ledger=recorded.ledger)
    return session.new(
        BudgetExhausted,
        **at,
        ledger=breach.ledger,
        spent=min(breach.spent, MAX_INT),
        allowance=breach.allowance,
        held=breach.held,
    )


def why(session: Session, since: int) -> str:
    """What the BudgetExhausted the session wrote after stream version `since` says of the
    spent ledger, as " (the run's allowance ...)"; "" for none, or a v1 (a reason written
    before it named the ledger is written the same on replay)."""
    for version in range(session.position, since, -1):
        event = session.record.stored(version)
        if isinstance(event, BudgetExhausted):
            said = event.said() if event.ledger is not None else ""
            return f" ({said})" if said else ""
    return ""
