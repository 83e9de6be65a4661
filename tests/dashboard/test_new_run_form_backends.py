"""The new-run form offers the endpoint backend only where one is configured (in settings, where
the environment is read), and says what to set otherwise."""

from __future__ import annotations

from dashboard.forms import NewRunForm

CHOICE = {
    "team": "repo-fix",
    "scenario": "first-flight",
    "model": "endpoint",
    "allowance": 5000,
    "max_turns": 12,
}


def test_the_endpoint_backend_is_refused_with_what_to_set_when_none_is_configured(settings):
    settings.MODEL_BASE_URL = ""
    form = NewRunForm(data=CHOICE)
    assert not form.is_valid()
    assert "MINUTES_MODEL_BASE_URL" in form.errors["model"][0]


def test_the_endpoint_backend_is_accepted_once_one_is_configured(settings):
    settings.MODEL_BASE_URL = "http://127.0.0.1:9/v1"
    settings.MODELS = {"MINUTES_MODEL": "some-model"}
    form = NewRunForm(data=CHOICE)
    assert form.is_valid(), form.errors


def test_an_endpoint_without_a_model_name_is_refused_naming_what_to_set(settings):
    """A URL alone passed the form, and the run failed its first step three times over, to
    wait in the dead-letter queue saying only "MINUTES_MODEL is not set"."""
    settings.MODEL_BASE_URL = "http://127.0.0.1:9/v1"
    settings.MODELS = {"MINUTES_MODEL_BASE_URL": "http://127.0.0.1:9/v1"}
    form = NewRunForm(data=CHOICE)
    assert not form.is_valid()
    assert form.errors["model"][0].startswith("MINUTES_MODEL is not set (nor OPENAI_MODEL)")


def test_an_endpoint_url_that_is_not_http_is_refused_naming_it(settings):
    settings.MODEL_BASE_URL = "127.0.0.1:9/v1"
    settings.MODELS = {"MINUTES_MODEL": "some-model"}
    form = NewRunForm(data=CHOICE)
    assert not form.is_valid()
    assert "must start with http:// or https://, not '127.0.0.1:9/v1'" in form.errors["model"][0]
