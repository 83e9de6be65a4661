"""An API key no HTTP header can carry (a line break inside it, as a key file of two lines
gives, or a character outside Latin-1) is refused where the setting is read, naming it and
never saying its value. http.client refused it as the first call was made, with a ValueError
quoting the whole header ("Invalid header value b'Bearer sk-...'"); that is no model's failure,
so no blanking of the key ran: the command line printed it in a traceback, and a run showed it
on its page, in the API, its export, the dead letters and the worker's log. Past the settings,
a header no request can carry is not sent and is said by its name alone."""

from __future__ import annotations

import pytest

from runtime import cli, http_deadline
from runtime.model import ChatMessage
from runtime.openai_client import OpenAIClient
from runtime.openai_settings import ModelConfigError, check_settings
from tests.fakellm import FakeServer

KEY = "sk-SECRETKEY-0123456789abcdefghijklmnopqrstuvwxyz"
BAD = {
    "newline": f"{KEY}\nsecond-line-of-file",
    "carriage-return": f"{KEY}\rx",
    "nul": f"{KEY}\x00x",
    "outside-latin-1": f"{KEY}\u2019x",
    "outside-ascii": f"{KEY}\u00e9",
}


def said_nothing_of_it(text: str) -> bool:
    return KEY[:16] not in text and "second-line" not in text


@pytest.mark.parametrize("key", BAD.values(), ids=list(BAD))
def test_the_settings_refuse_it_naming_the_setting_not_the_value(key: str) -> None:
    for name in ("MINUTES_MODEL_API_KEY", "OPENAI_API_KEY"):
        with pytest.raises(ModelConfigError) as caught:
            check_settings({name: key})
        assert str(caught.value).startswith(f"{name} holds ")
        assert said_nothing_of_it(str(caught.value))

        environ = {"MINUTES_MODEL_BASE_URL": "http://127.0.0.1:9/v1", "MINUTES_MODEL": "m"}
        with pytest.raises(ModelConfigError) as caught:
            OpenAIClient.from_env({**environ, name: key})
        assert str(caught.value).startswith(f"{name} holds ")
        assert said_nothing_of_it(str(caught.value))

    with pytest.raises(ModelConfigError) as caught:
        OpenAIClient("http://127.0.0.1:9/v1", "m", key)
    assert said_nothing_of_it(str(caught.value))


def test_a_key_read_from_a_file_with_its_last_newline_is_taken_as_it_was() -> None:
    environ = {"MINUTES_MODEL_BASE_URL": "http://127.0.0.1:9/v1", "MINUTES_MODEL": "m"}
    check_settings({"MINUTES_MODEL_API_KEY": f" {KEY}\n"})
    assert OpenAIClient.from_env({**environ, "MINUTES_MODEL_API_KEY": f"{KEY}\r\n"}).api_key == KEY


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (f"Bearer {BAD['newline']}", "the Authorization header holds a line break"),
        (f"Bearer {BAD['nul']}", "the Authorization header holds a control character"),
        (f"Bearer {BAD['outside-latin-1']}", "the Authorization header holds a character outside"),
    ],
    ids=["newline", "nul", "outside-latin-1"],
)
def test_a_request_whose_header_cannot_be_carried_is_not_sent(
    server: FakeServer, value: str, said: str
) -> None:
    with pytest.raises(http_deadline.Unsendable) as caught:
        http_deadline.post(server.url, b"{}", {"Authorization": value}, 5, 100)
    assert str(caught.value).startswith(said) and said_nothing_of_it(str(caught.value))
    assert caught.value.header == "Authorization"
    assert server.requests == []


def test_what_http_client_refuses_otherwise_is_said_by_its_kind(server: FakeServer) -> None:
    with pytest.raises(http_deadline.Unsendable) as caught:
        http_deadline.post(server.url, b"{}", {"Bad Name:": "x"}, 5, 100)
    assert str(caught.value) == "the request could not be made (ValueError)"


def test_a_client_whose_key_went_bad_fails_at_once_as_a_setting(server: FakeServer) -> None:
    client = OpenAIClient(server.url, "m", KEY, sleep=lambda s: pytest.fail("waited"))
    client.api_key = BAD["newline"]  # past the settings' check, as no setting should get

    with pytest.raises(ModelConfigError) as caught:
        client.complete([ChatMessage(role="user", content="hello")], [])

    assert "was not sent: the Authorization header holds a line break" in str(caught.value)
    assert "check MINUTES_MODEL_API_KEY" in str(caught.value)
    assert said_nothing_of_it(str(caught.value)) and server.requests == []


def test_the_command_line_refuses_it_before_the_run_begins(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("MINUTES_MODEL_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MINUTES_MODEL", "some-model")
    monkeypatch.setenv("MINUTES_MODEL_API_KEY", BAD["newline"])
    path = tmp_path / "j.jsonl"
    fly = ["fly", "--team", "solo", "--model", "endpoint", "--no-sandbox", "--journal", str(path)]

    code = cli.main(fly)

    out, err = capsys.readouterr()
    assert code == cli.EXIT_BAD_INPUT, err
    assert "error: MINUTES_MODEL_API_KEY holds a line break" in err and "Traceback" not in err
    assert said_nothing_of_it(out + err)
    assert not path.exists() or said_nothing_of_it(path.read_text())
