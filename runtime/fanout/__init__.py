"""Parallel specialists with structural recovery: the generic fan-out engine and its parts.

    contracts   Handoff and Report: what a worker gets and what it must give back
    engine      hand briefs over, run specialists at once (threads here, or other workers),
                collect their reports by a deadline, check their findings
    settle      what becomes of each report: checked, or routed and the route carried out
    routing     the router on failure reasons (retry, reassign, fallback, escalate), capped
    breakers    circuit and spend breakers, and the one guarded call (`CircuitBreaker.call`)
    saga        multi-step side effects with compensations, each exactly once
    verify      findings checked against the tool results they cite
    restarts    whether a specialist that failed is started again, when, and when its sub-task
                is given up (an outage of its model endpoint is waited out, not counted)

May import the rest of `runtime` (events, session, journal, tools, coordination), never a team:
a team (`teams.triage`) gives the engine its planner and its specialist as plain callables.
Nothing here talks to a queue: a host's `dispatch` (the workers' Celery task) does.

How many specialists run at once is bounded by the run's `parallel` slots (leases, so the bound
holds across worker processes), and how often one is restarted by the engine's cap on its
journalled starts (so a resumed or replayed run counts the same). An in-memory supervisor and
per-process bulkheads, built earlier beside these, bounded neither across processes nor on
replay, had no caller, and were removed.
"""
