"""A triage run's "Check replay" said "identical: all 14 events" where its header counts 52:
the replay runs the run's own journal again and reads its specialists' events back from the
record (their reports, as the run's journal holds them), without saying so. The page, the API
and `python -m runtime replay` now say how many specialists' events were read back."""

from __future__ import annotations

import io

import pytest
from django.test import Client

from journal_store import projection
from journal_store.transfer import import_journal
from runtime.cli import main
from runtime.jsonl import JsonlJournal

pytestmark = pytest.mark.django_db


def worker_events(path) -> int:
    return len(JsonlJournal(path).read_prefix("worker-"))


def test_the_replay_of_a_triage_run_says_its_specialists_events_were_read_back(
    as_reviewer, token, fly_team, capsys
):
    flown = fly_team("broken-policy", team="support-triage")
    specialists = worker_events(flown.path)
    assert specialists > 0
    assert main(["replay", str(flown.path)]) == 0
    said = capsys.readouterr().out
    assert said.startswith("identical (and its specialists'")
    assert f"{specialists} events, read back from the record, not run again)" in said

    data = flown.path.read_bytes()
    import_journal(io.BytesIO(data), name=flown.path.name, size=len(data))
    projection.catch_up()
    page = as_reviewer.post(f"/runs/{flown.run_id}/replay", HTTP_HX_REQUEST="true")
    text = page.content.decode()
    assert "identical: all" in text
    assert f"its specialists&#x27; {specialists} events, read back from the record" in text
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    answer = api.post(f"/api/runs/{flown.run_id}/replay").json()
    assert answer["identical"] is True and answer["read_back"] == specialists


def test_a_run_without_specialists_says_nothing_of_them(fly_team, capsys):
    flown = fly_team("first-flight")
    assert main(["replay", str(flown.path)]) == 0
    assert capsys.readouterr().out == "identical\n"
