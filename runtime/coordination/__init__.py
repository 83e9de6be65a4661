"""Coordination safety: effects once, facts by compare-and-swap, claims and typed conflicts,
intents and leases, one mutation gate, structured statuses, a worktree per parallel writer.

Each primitive is a small class over the Journal protocol, so it works on every store; none
imports a team, Django or a model client.
It may import the rest of `runtime` (events, journal); never a team.
"""
