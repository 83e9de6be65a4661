"""OpenAIClient's settings: the variables it reads (Minutes' own, then OpenAI's), what it says
of each one missing or wrong, and the local model server's address."""

from __future__ import annotations

import pytest

from runtime.model import ModelError
from runtime.openai_client import LOCAL_MAX_TOKENS, OpenAIClient
from runtime.openai_settings import ModelConfigError, local_url_of


def test_from_env_reads_the_minutes_variables() -> None:
    client = OpenAIClient.from_env(
        {
            "MINUTES_MODEL_BASE_URL": "http://localhost:11434/v1/",
            "MINUTES_MODEL": "llama3.1",
            "MINUTES_MODEL_API_KEY": "k",
            "MINUTES_MODEL_TIMEOUT": "12.5",
            "MINUTES_MODEL_MAX_TOKENS": " 1024 ",
            "OPENAI_BASE_URL": "https://ignored.example",
            "OPENAI_MODEL": "ignored",
        }
    )

    assert client.base_url == "http://localhost:11434/v1"
    assert client.model == "llama3.1"
    assert client.api_key == "k"
    assert client.timeout == 12.5
    assert client.max_tokens == 1024


def test_from_env_falls_back_to_the_openai_variables() -> None:
    client = OpenAIClient.from_env(
        {
            "OPENAI_BASE_URL": "https://api.example.com/v1",
            "OPENAI_MODEL": "gpt-x",
            "OPENAI_API_KEY": "sk-1",
        }
    )

    assert (client.base_url, client.model, client.api_key) == (
        "https://api.example.com/v1",
        "gpt-x",
        "sk-1",
    )
    assert client.timeout == 60.0
    assert client.max_tokens is None  # the server's own limit


def test_the_local_model_has_a_completion_limit_unless_one_is_set() -> None:
    assert OpenAIClient.local({}).max_tokens == LOCAL_MAX_TOKENS
    assert OpenAIClient.local({"MINUTES_MODEL_MAX_TOKENS": "64"}).max_tokens == 64


def test_from_env_needs_no_api_key() -> None:
    client = OpenAIClient.from_env({"MINUTES_MODEL_BASE_URL": "http://h/v1", "MINUTES_MODEL": "m"})

    assert client.api_key is None


def test_a_key_read_from_a_file_loses_its_newline() -> None:
    environ = {"MINUTES_MODEL_BASE_URL": "https://h/v1", "MINUTES_MODEL": "m"}
    client = OpenAIClient.from_env(environ | {"MINUTES_MODEL_API_KEY": " sk-from-a-file\n"})
    assert client.api_key == "sk-from-a-file"
    assert OpenAIClient.from_env(environ | {"MINUTES_MODEL_API_KEY": " \n"}).api_key is None


@pytest.mark.parametrize(
    ("url", "warned"),
    [
        ("http://models.example.org/v1", True),
        ("http://10.0.0.7:8000/v1", True),
        ("https://models.example.org/v1", False),
        ("http://localhost:11434/v1", False),
        ("http://127.0.0.1:8765/v1", False),
        ("http://[::1]:8000/v1", False),
    ],
)
def test_a_key_sent_in_plain_text_across_a_network_is_warned_of_once(caplog, url, warned) -> None:
    from runtime import openai_client

    openai_client.WARNED.discard(url)
    environ = {"MINUTES_MODEL_BASE_URL": url, "MINUTES_MODEL": "m", "MINUTES_MODEL_API_KEY": "sk-1"}
    with caplog.at_level("WARNING", logger="runtime.openai_client"):
        OpenAIClient.from_env(environ)
        OpenAIClient.from_env(environ)
        OpenAIClient.from_env({**environ, "MINUTES_MODEL_API_KEY": ""})  # no key: nothing to say
    said = [r.getMessage() for r in caplog.records if "plain text" in r.getMessage()]
    assert len(said) == (1 if warned else 0)
    if warned:
        assert url in said[0] and "sk-1" not in said[0]


@pytest.mark.parametrize(
    ("environ", "variable"),
    [
        ({"MINUTES_MODEL": "m"}, "MINUTES_MODEL_BASE_URL"),
        ({"MINUTES_MODEL_BASE_URL": "http://h/v1"}, "MINUTES_MODEL "),
        ({"MINUTES_MODEL_BASE_URL": "", "MINUTES_MODEL": "m"}, "MINUTES_MODEL_BASE_URL"),
        (
            {
                "MINUTES_MODEL_BASE_URL": "http://h",
                "MINUTES_MODEL": "m",
                "MINUTES_MODEL_TIMEOUT": "soon",
            },
            "MINUTES_MODEL_TIMEOUT",
        ),
        (
            {
                "MINUTES_MODEL_BASE_URL": "http://h",
                "MINUTES_MODEL": "m",
                "MINUTES_MODEL_TIMEOUT": "-1",
            },
            "MINUTES_MODEL_TIMEOUT",
        ),
        ({"MINUTES_MODEL_BASE_URL": "localhost:8000", "MINUTES_MODEL": "m"}, "http://"),
        (
            {
                "MINUTES_MODEL_BASE_URL": "http://h",
                "MINUTES_MODEL": "m",
                "MINUTES_MODEL_MAX_TOKENS": "1e3",
            },
            "MINUTES_MODEL_MAX_TOKENS must be a positive whole number of tokens, not '1e3'",
        ),
        (
            {
                "MINUTES_MODEL_BASE_URL": "http://h",
                "MINUTES_MODEL": "m",
                "MINUTES_MODEL_MAX_TOKENS": "0",
            },
            "MINUTES_MODEL_MAX_TOKENS",
        ),
    ],
    ids=[
        "no-base-url",
        "no-model",
        "empty-base-url",
        "timeout-not-number",
        "timeout-negative",
        "no-scheme",
        "max-tokens-not-whole",
        "max-tokens-zero",
    ],
)
def test_from_env_names_the_variable_that_is_missing_or_wrong(
    environ: dict[str, str], variable: str
) -> None:
    with pytest.raises(ModelConfigError) as caught:
        OpenAIClient.from_env(environ)

    assert variable in str(caught.value)
    assert isinstance(caught.value, ModelError)


@pytest.mark.parametrize(
    "given",
    [
        "http://127.0.0.1:8766",  # the server answers under /v1 only: every call was a 404
        "http://127.0.0.1:8766/",
        "http://127.0.0.1:8766/v2",
        "http://127.0.0.1/v1",  # no port
        "http://127.0.0.1:port/v1",
        "ftp://127.0.0.1:8766/v1",
        "127.0.0.1:8766/v1",
        "http://127.0.0.1:8766/v1?x=1",
    ],
)
def test_a_local_server_address_without_port_and_v1_is_refused_naming_the_setting(given):
    with pytest.raises(ModelConfigError) as caught:
        OpenAIClient.local({"MINUTES_LOCAL_MODEL_URL": given})
    assert str(caught.value) == (
        "MINUTES_LOCAL_MODEL_URL must be the local model server's address with its port and "
        f"the path /v1, where its API answers (as http://127.0.0.1:8765/v1), not {given!r}"
    )


def test_a_local_server_address_is_taken_without_its_trailing_slash_and_defaults_when_unset():
    assert local_url_of({"MINUTES_LOCAL_MODEL_URL": " http://localhost:9000/v1/ "}) == (
        "http://localhost:9000/v1"
    )
    assert local_url_of({"MINUTES_LOCAL_MODEL_URL": ""}) == "http://127.0.0.1:8765/v1"
    assert local_url_of({}) == "http://127.0.0.1:8765/v1"
