"""The beat's round that merges the trigram indexes' segments (journal_store/substrings.py
`tidy`): the runs list's Search and each review queue's words, whose look-ups otherwise cost
more as their tables grow."""

from __future__ import annotations

from journal_store import queues, substrings

SEARCHED = queues.SEARCHED


def tidy() -> list[str]:
    """One round: some of each index's segments merged (none on PostgreSQL)."""
    return substrings.tidy(SEARCHED)
