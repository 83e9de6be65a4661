"""A run's duration reads as a person says it: under a second is "<1 s", never "0 s"."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime, timedelta

import pytest

from dashboard import present
from journal_store import projection
from journal_store.transfer import import_journal

START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("seconds", "said"),
    [
        (0, "<1 s"),
        (0.4, "<1 s"),
        (1, "1 s"),
        (42.9, "42 s"),
        (61, "1 min 1 s"),
        (3_700, "1 h 1 min"),
    ],
)
def test_a_duration_reads_in_the_unit_it_needs(seconds, said):
    assert present.duration(START, START + timedelta(seconds=seconds)) == said


def test_an_unknown_start_says_so():
    assert present.duration(None, START) == "unknown"


@pytest.mark.django_db
def test_a_run_within_a_second_shows_less_than_a_second(as_owner):
    lines = [
        {
            "kind": "RunStarted",
            "run_id": "quick-1",
            "agent": "coder",
            "task": "fix it",
            "t": 1_700_000_000.0,
        },
        {
            "kind": "AgentFinished",
            "run_id": "quick-1",
            "agent": "coder",
            "result": {"ok": True},
            "t": 1_700_000_000.4,
        },
    ]
    body = "".join(json.dumps(line) + "\n" for line in lines).encode()
    import_journal(io.BytesIO(body), name="quick.jsonl", size=len(body), by="owner")
    projection.catch_up()
    page = as_owner.get("/runs/quick-1/").content.decode()
    assert "<dt>Duration</dt><dd>&lt;1 s</dd>" in page
    listing = as_owner.get("/").content.decode()
    assert 'data-label="Duration">&lt;1 s</td>' in listing
