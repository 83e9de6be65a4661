"""A user name and password in the model endpoint's URL (http://alice:pw@host/v1) are refused
where the setting is read, naming it and quoting the URL without them. They were taken: urllib
sends no credentials from a URL, but asked the name server for "alice:pw@host", every try
failed ("Name or service not known") and was waited out as an outage, and the password was in
every message that quoted the URL: the API, the run page, its bill and findings, its export, the
dead letters, the trace and the worker's log. A URL refused for anything else is quoted without
them too."""

from __future__ import annotations

import pytest

from runtime import cli, http_deadline, redact
from runtime.model import ChatMessage
from runtime.openai_client import ModelHTTPError, OpenAIClient
from runtime.openai_settings import ModelConfigError, check_settings, local_url_of
from tests.fakellm import FakeServer, Reply

PASSWORD = "hunter2-pass-word"


@pytest.mark.parametrize(
    "url",
    [
        f"http://alice:{PASSWORD}@127.0.0.1:8080/v1",
        f"https://{PASSWORD}@api.example.com/v1",
        f"http://alice:{PASSWORD}/x@127.0.0.1/v1",  # a / in the password ends the host early
        f"http://alice:{PASSWORD}@[::1/v1",  # malformed too: refused for that
        f"ftp://bob:{PASSWORD}@10.0.0.1/v1",  # not http: refused for that
        f"alice:{PASSWORD}@127.0.0.1:8080/v1",  # no scheme at all
    ],
)
def test_the_setting_is_refused_naming_it_without_the_password(url: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        check_settings({"OPENAI_BASE_URL": url})
    said = str(caught.value)
    assert said.startswith("OPENAI_BASE_URL must ") and PASSWORD not in said and "***@" in said

    for refusal in (
        lambda: OpenAIClient.from_env({"MINUTES_MODEL_BASE_URL": url, "MINUTES_MODEL": "m"}),
        lambda: OpenAIClient(url, "m"),
        lambda: local_url_of({"MINUTES_LOCAL_MODEL_URL": url}),
    ):
        with pytest.raises(ModelConfigError) as caught:
            refusal()
        assert PASSWORD not in str(caught.value) and "alice" not in str(caught.value)


def test_the_refusal_of_userinfo_says_where_a_key_goes() -> None:
    with pytest.raises(ModelConfigError) as caught:
        check_settings({"MINUTES_MODEL_BASE_URL": f"http://alice:{PASSWORD}@h:1/v1"})
    assert str(caught.value) == (
        "MINUTES_MODEL_BASE_URL must hold no user name or password (before an @): they are not "
        "sent as credentials but looked up as part of the host's name; an API key goes in "
        "MINUTES_MODEL_API_KEY, not 'http://***@h:1/v1'"
    )


def test_a_request_to_a_url_with_userinfo_is_not_sent() -> None:
    with pytest.raises(http_deadline.Unsendable) as caught:
        http_deadline.post(f"http://alice:{PASSWORD}@127.0.0.1:9/v1", b"{}", {}, 5, 100)
    assert PASSWORD not in str(caught.value) and "user name or password" in str(caught.value)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://alice:pw@host:1/v1", "http://***@host:1/v1"),
        ("http://host:1/v1", "http://host:1/v1"),
        ("http://[::1/v1", "http://[::1/v1"),
        ("http://a:p/w?x@host/v1", "http://***@host/v1"),
        ("a:pw@host/v1", "***@host/v1"),
        ("", ""),
    ],
)
def test_a_url_is_quoted_without_its_userinfo(url: str, shown: str) -> None:
    assert redact.without_userinfo(url) == shown


def test_a_redirect_to_a_url_with_userinfo_is_quoted_without_it(server: FakeServer) -> None:
    server.queue(
        Reply(b"", 301, {"Location": f"https://bob:{PASSWORD}@elsewhere/v1/chat/completions"})
    )
    client = OpenAIClient(server.url, "m")
    with pytest.raises(ModelHTTPError) as caught:
        client.complete([ChatMessage(role="user", content="hello")], [])
    assert PASSWORD not in str(caught.value) and "https://***@elsewhere/v1" in str(caught.value)


def test_the_command_line_refuses_it_before_the_run_begins(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("MINUTES_MODEL_BASE_URL", f"http://alice:{PASSWORD}@127.0.0.1:9/v1")
    monkeypatch.setenv("MINUTES_MODEL", "some-model")
    path = tmp_path / "j.jsonl"
    fly = ["fly", "--team", "solo", "--model", "endpoint", "--no-sandbox", "--journal", str(path)]

    code = cli.main(fly)

    out, err = capsys.readouterr()
    assert code == cli.EXIT_BAD_INPUT, err
    assert "error: MINUTES_MODEL_BASE_URL must hold no user name or password" in err
    assert PASSWORD not in out + err
    assert not path.exists() or PASSWORD not in path.read_text()
