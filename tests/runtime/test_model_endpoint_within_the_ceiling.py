"""A run's wall-clock ceiling holds while its agent waits on a model endpoint: the client's
retries (and its timeout) stop where the ceiling falls, rather than carrying one turn minutes
past it, since the session checks the ceiling only at turn boundaries."""

from __future__ import annotations

from runtime import flight
from runtime.jsonl import JsonlJournal
from runtime.team import Services
from tests.fakellm import Reply


def test_a_server_that_keeps_failing_does_not_hold_the_run_past_its_ceiling(server, tmp_path):
    models = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "some-model"}
    # Each answer asks for 15 s: within the client's patience (20 s), past the run's 10 s.
    server.queue(*[Reply(b"overloaded", 503, {"Retry-After": "15"}) for _ in range(5)])
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan("solo", "solo-fix", "r-ceiling", model="endpoint", max_seconds=10)

    outcome = flight.fly(journal, config, "r-ceiling", tmp_path, services=Services(models=models))

    assert len(server.requests) == 1  # no wait of 15 s was begun
    assert outcome.status == "escalated"
    assert "HTTP 503" in outcome.reason
    assert "the run's wall-clock ceiling falls before the next try" in outcome.reason
