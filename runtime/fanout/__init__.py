"""Parallel specialists with structural recovery, as plain building blocks.

    contracts  Handoff and Report: what a worker gets and what it must give back
    recovery   the router on failure reasons, restart caps, breakers and bulkheads
    saga       multi-step side effects with compensations, each exactly once
    verify     findings checked against the tool results they cite

Nothing here runs workers or talks to a queue: a harness (a thread pool, Celery tasks) wires
these together and journals the events they produce (`runtime.events.fanout`).
"""
