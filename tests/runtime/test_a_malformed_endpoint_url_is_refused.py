"""A model endpoint's URL no request could be made to is refused where the setting is read,
naming it, rather than found as the first call was made. `http://[::1/v1` raised ValueError
out of the settings' check (a 500 on the start of a run, a traceback on the command line), and
`http://`, `http:///v1`, a port that is no number and a space were each said as an endpoint
that did not answer: exit 4 to `resume` a run that never could, a quarter of an hour waited out
on the workers before the dead letter. A timeout of 1e-300 seconds went the same way."""

from __future__ import annotations

import pytest

from runtime import cli, http_deadline
from runtime.model import ChatMessage
from runtime.openai_client import OpenAIClient
from runtime.openai_settings import ModelConfigError, check_settings, local_url_of

MALFORMED = {
    "http://[::1/v1": "must be a URL (an IPv6 address goes whole in brackets",
    "http://": "must name a host after its scheme",
    "http:///v1": "must name a host after its scheme",
    "http://127.0.0.1:notaport/v1": "must have a port from 1 to 65535",
    "http://127.0.0.1:70000/v1": "must have a port from 1 to 65535",
    "http://127.0.0.1:0/v1": "must have a port from 1 to 65535",
    "http://exa mple.com/v1": "must hold no space, control character or character outside",
    "http://127.0.0.1:8080/v1\n/x": "must hold no space, control character",
    "ftp://127.0.0.1/v1": "must start with http:// or https://",
}


@pytest.mark.parametrize(("url", "said"), MALFORMED.items(), ids=list(MALFORMED))
def test_the_settings_check_refuses_the_url_naming_the_setting(url: str, said: str) -> None:
    for name in ("MINUTES_MODEL_BASE_URL", "OPENAI_BASE_URL"):
        with pytest.raises(ModelConfigError) as caught:
            check_settings({name: url})
        assert str(caught.value).startswith(f"{name} {said}")
        with pytest.raises(ModelConfigError):
            OpenAIClient.from_env({name: url, "MINUTES_MODEL": "m"})
    with pytest.raises(ModelConfigError, match="the model base URL must"):
        OpenAIClient(url, "m")
    with pytest.raises(ModelConfigError, match="MINUTES_LOCAL_MODEL_URL must be"):
        local_url_of({"MINUTES_LOCAL_MODEL_URL": url})


def test_a_good_url_passes_as_it_did() -> None:
    for url in ("http://127.0.0.1:8080/v1", "https://api.example.com/v1/", "http://[::1]:80/v1"):
        check_settings({"MINUTES_MODEL_BASE_URL": url})
    client = OpenAIClient.from_env(
        {"MINUTES_MODEL_BASE_URL": " http://h:1/v1/ ", "MINUTES_MODEL": "m"}
    )
    assert client.base_url == "http://h:1/v1"


@pytest.mark.parametrize("timeout", ["1e-300", "0.5", "1e300", "86401", "inf", "nan", "0"])
def test_a_timeout_no_call_could_keep_is_refused(timeout: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        check_settings({"MINUTES_MODEL_TIMEOUT": timeout})
    assert str(caught.value) == (
        f"MINUTES_MODEL_TIMEOUT must be a number of seconds from 1 to 86400, not {timeout!r}"
    )


@pytest.mark.parametrize("url", list(MALFORMED))
def test_a_request_to_a_malformed_url_is_unsendable_not_unreachable(url: str) -> None:
    """The second line: a URL that got past the settings is not asked, nor said as an outage."""
    with pytest.raises(http_deadline.Unsendable, match=r"^the URL must "):
        http_deadline.post(url, b"{}", {}, 5, 100)


def test_a_client_whose_url_went_bad_fails_at_once_as_a_setting() -> None:
    client = OpenAIClient("http://127.0.0.1:9/v1", "m", sleep=lambda s: pytest.fail("waited"))
    client.base_url = "http://127.0.0.1:notaport/v1"
    with pytest.raises(ModelConfigError) as caught:
        client.complete([ChatMessage(role="user", content="hello")], [])
    assert "was not sent: the URL must have a port" in str(caught.value)
    assert "MINUTES_MODEL_BASE_URL" in str(caught.value)


@pytest.mark.parametrize("url", ["http://[::1/v1", "http://", "http://127.0.0.1:notaport/v1"])
def test_the_command_line_refuses_it_before_the_run_begins(
    url: str, tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.setenv("MINUTES_MODEL_BASE_URL", url)
    monkeypatch.setenv("MINUTES_MODEL", "some-model")
    path = tmp_path / "j.jsonl"
    fly = ["fly", "--team", "solo", "--model", "endpoint", "--no-sandbox", "--journal", str(path)]

    code = cli.main(fly)

    said = capsys.readouterr().err
    assert code == cli.EXIT_BAD_INPUT, said
    assert "error: MINUTES_MODEL_BASE_URL must " in said and "Traceback" not in said
    assert "resume" not in said
    assert not path.exists() or path.read_text() == ""  # no run was begun
