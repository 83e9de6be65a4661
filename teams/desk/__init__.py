"""The support desk: an order agent and a support agent working on one order.

The order agent keeps the order's status true to the warehouse feed; the support agent answers
the customer's ticket, and may refund through a slow payment provider. Both start from the same
snapshot of the order, taken when the ticket arrived, so they can disagree. What keeps them
honest is in the tools (`tools`), not the prompts, and the verdict is the harness's own check
of the order, the ledger and the provider (`harness`).

    settings   SupportDeskSettings: the desk's world for one run (DeskSettings), and votes
    services   the orders and payments protocols, the desk's errors, DeskServices (what a
               host provides: the workers' database desk)
    local      the command line's desk: orders in the journal, a stand-in payment provider
    tools      the agents' tools, scoped to the run's order
    vote       the refund decided by a vote of independent samples (`votes`)
    harness    the flight and its verdict
    scenarios  the scripted presets (the first is the default)

May import `runtime` only; never another team, never Django (the database desk is the Django
app `desk`, which imports this package).
"""

from __future__ import annotations

from runtime.scripted_votes import refuse_unscripted_votes
from runtime.team import FlightConfig, Option, Scenario, Team, TeamSettings
from teams.desk.harness import fly, ready
from teams.desk.scenarios import SCENARIOS
from teams.desk.settings import DeskSettings, SupportDeskSettings, order_refusal
from teams.desk.tools import ORDER_AGENT, SUPPORT_AGENT


def pin(settings: TeamSettings, parent: str) -> TeamSettings:
    """A fork works on its parent's order (named for the parent when the run named none)."""
    assert isinstance(settings, SupportDeskSettings)
    if settings.desk.order_id is not None:
        return settings
    order = "o-" + parent.removeprefix("r-")
    return settings.model_copy(
        update={"desk": settings.desk.model_copy(update={"order_id": order})}
    )


def vet(scenario: Scenario, config: FlightConfig) -> None:
    """Refuse a scripted refund voted on by another number of samples than the scenario
    scripts (the support agent would run out of script, or answer a sample as an action)."""
    refuse_unscripted_votes(scenario, SCENARIOS, config, SUPPORT_AGENT, "the refund decision")


TEAM = Team(
    name="support-desk",
    agents=(ORDER_AGENT, SUPPORT_AGENT),
    scenarios=SCENARIOS,
    fly=fly,
    settings=SupportDeskSettings,
    options=(
        Option(
            "--order",
            "desk",
            "support-desk: the order the ticket is about (default: a fresh one)",
            into="order_id",
            refusal="works on no orders (only support-desk does)",
            check=order_refusal,
        ),
        Option(
            "--votes",
            "votes",
            "samples of a critical decision, and their majority: repo-fix's review, "
            "support-desk's refund (1, 3 or 5)",
            kind="int",
            refusal="has no voted decision (only repo-fix and support-desk have one)",
        ),
    ),
    pin=pin,
    vet=vet,
    ready=ready,
)

__all__ = ["TEAM", "DeskSettings", "SupportDeskSettings"]
