"""Coordination safety: effects once, facts by compare-and-swap, claims, intents and leases."""
