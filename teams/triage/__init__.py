"""The support-triage team: specialists in parallel over real MCP tool servers.

A ticket is split into independent sub-tasks, each handed to one specialist with a brief it
cannot see past (objective, resolved inputs, its tool belt, step and token budgets, a report
contract, a deadline). The specialists run at once, each on a stream of its own
(`worker-<run>-<sub-task>`), and are collected with a deadline. What comes back is checked
before it is believed:

    report       typed (ok | failed, with a reason code); a broken report is a failure
    findings     each must cite one of the worker's own tool calls and agree with its result
    recovery     a failed sub-task is routed on its reason code: a bigger budget, a cached
                 fallback, or escalation; an answer built on a fallback says DEGRADED and why
    breakers     each tool server sits behind a circuit breaker on its failure rate; a tripped
                 breaker refuses calls at once and is journalled

The answer is composed by the harness from verified findings only; the verdict is "done" when
every sub-task was answered (degraded or not) and "failed" when none was. The fan-out itself
(hand-offs, threads or workers, deadlines, settling) is the runtime's (`runtime.fanout`).

    settings    TriageSettings: parallel, deadline, spend_rate, refund
    plan        the sub-tasks and their briefs, the prompts, the recovery policy
    services    TriageServices: the tool surface a host provides
    surface     the team's MCP servers (`servers/`) and starting them
    belt        the tools, each server behind a breaker
    spend       the spend breaker around the specialists' models
    specialist  one specialist's run, to a typed report
    onward      a specialist handing a part of its sub-task on, within the delegation limits
    saga        the refund as a saga
    answer      the composed answer and the verdict
    harness     the flight
    scenarios   the scripted presets (the first is the default)

May import `runtime` only; never another team.
"""

from __future__ import annotations

from runtime.team import Team
from teams.triage.harness import fly
from teams.triage.plan import KB, ORDERS, POLICY, RETURNS
from teams.triage.scenarios import SCENARIOS
from teams.triage.settings import TriageSettings

TEAM = Team(
    name="support-triage",
    agents=(ORDERS, KB, POLICY, RETURNS),
    scenarios=SCENARIOS,
    fly=fly,
    settings=TriageSettings,
)

__all__ = ["TEAM", "TriageSettings"]
