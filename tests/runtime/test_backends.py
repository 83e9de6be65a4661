"""Which model backend each agent runs on, as recorded in a run's settings."""

from __future__ import annotations

import pytest

from runtime import flight
from runtime.openai_client import OpenAIClient
from runtime.openai_settings import LOCAL_URL


def test_journals_that_named_the_endpoint_by_its_old_name_still_read() -> None:
    config = flight.plan("repo-fix", "first-flight", "r-old", model="openai")
    assert config.model == "endpoint"
    again = flight.FlightConfig.model_validate(
        {**config.model_dump(), "models": {"coder": "openai"}}
    )
    assert again.models == {"coder": "endpoint"}


def test_an_unknown_backend_is_refused_by_name() -> None:
    with pytest.raises(flight.FlightError, match="model"):
        flight.plan("repo-fix", "first-flight", "r-x", model="gpt-9")


def test_the_local_backend_talks_to_the_managed_server_with_its_quirks() -> None:
    config = flight.plan("repo-fix", "first-flight", "r-x", models={"reviewer": "local"})
    clients = flight.clients_for(config, flight.team_named("repo-fix"), models={})
    reviewer = clients["reviewer"]
    assert isinstance(reviewer, OpenAIClient) and reviewer.pick_then_force
    assert reviewer.base_url == LOCAL_URL
    assert not isinstance(clients["coder"], OpenAIClient)
