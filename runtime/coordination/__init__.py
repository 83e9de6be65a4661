"""Coordination safety: effects once, facts by compare-and-swap, claims, intents and leases.

May import the rest of `runtime` (events, journal); never a team.
"""
