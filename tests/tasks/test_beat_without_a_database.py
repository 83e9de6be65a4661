"""The beat's rounds when the database does not answer: one line each, not a traceback.

Run in a process of its own pointed at a PostgreSQL address nothing listens on, so the
connection is really refused (no database is stubbed), and the rounds are called as the beat's
worker calls them.
"""

from __future__ import annotations

import pytest

from tests.services import without_a_database

ROUNDS = """
import logging, sys
logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
import django
django.setup()
from tasks.effects import reconcile_effects
from tasks.indexes import tidy
from tasks.runs import reconcile
print(reconcile(), reconcile_effects(), tidy())
"""


@pytest.mark.slow
def test_a_round_of_the_beat_with_the_database_down_says_so_in_a_line_and_does_nothing(tmp_path):
    done = without_a_database(ROUNDS, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] [] []"
    lines = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr
    assert len(lines) == 3, done.stderr
    assert lines[0].startswith(
        "reviving stalled runs skipped this round: the database does not answer ("
    )
    assert lines[1].startswith("settling effects in flight skipped this round")
    assert lines[2].startswith("merging the search indexes skipped this round")
    assert "Connection refused" in lines[0]  # the database's own words, its first line
