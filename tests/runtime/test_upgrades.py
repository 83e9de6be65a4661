"""Journals written by an older Minutes still resume and replay after settings were added."""

from __future__ import annotations

import json

from runtime import flight
from runtime.jsonl import JsonlJournal

NEWER = ("desk", "parallel", "deadline", "refund")  # settings added after the first release


def test_a_journal_from_before_newer_settings_replays_identically(fly_team, tmp_path):
    flown = fly_team("first-flight")
    lines = flown.path.read_text().splitlines()
    first = json.loads(lines[0])
    assert first["kind"] == "TeamStarted"
    for name in NEWER:
        first["config"].pop(name, None)
    first["config"]["model"] = "scripted"
    old = tmp_path / "old.jsonl"
    old.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    report = flight.replay(JsonlJournal(old), flown.run_id)
    assert report.identical, report.difference
