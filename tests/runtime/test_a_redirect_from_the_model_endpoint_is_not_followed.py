"""A model endpoint that answers with a redirect is not followed, and the failure says where it
points and which setting to change. urllib followed 301, 302 and 303 to any host, plain http
too, with the API key in the Authorization header, turned the POST into a GET and took that
answer for the completion; a 307 or 308 failed "refused with HTTP 307:" saying nothing more."""

from __future__ import annotations

import pytest

from runtime.model import ChatMessage
from runtime.openai_client import ModelHTTPError, OpenAIClient
from tests.fakellm import FakeServer, Reply, completion

ASK = [ChatMessage(role="user", content="hello")]


@pytest.fixture
def elsewhere(server):  # `server` first: it keeps a proxy from the environment off 127.0.0.1
    other = FakeServer()
    other.thread.start()
    other.queue(Reply(completion("an answer from elsewhere")))
    yield other
    other.httpd.shutdown()
    other.httpd.server_close()


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_is_refused_naming_where_it_points_and_the_setting(
    server: FakeServer, elsewhere: FakeServer, status: int
) -> None:
    client = OpenAIClient(server.url, "m", api_key="sk-live-0123456789abcdef")
    moved = elsewhere.url.replace("127.0.0.1", "localhost") + "/chat/completions"
    server.queue(Reply(b"", status, {"Location": moved}))

    with pytest.raises(ModelHTTPError) as caught:
        client.complete(ASK, [])

    assert elsewhere.requests == []  # nothing (and no key) went there
    assert len(server.requests) == 1  # not tried again: only a setting can change the answer
    assert caught.value.status == status
    assert str(caught.value) == (
        f"POST {server.url}/chat/completions was redirected with HTTP {status} to {moved}, "
        "which is not followed (the request and its API key would go where no setting says): "
        "if the API is there, set MINUTES_MODEL_BASE_URL (or OPENAI_BASE_URL) to "
        + moved.removesuffix("/chat/completions")
    )


def test_a_relative_redirect_of_the_local_server_names_its_own_setting(server: FakeServer):
    client = OpenAIClient.local({"MINUTES_LOCAL_MODEL_URL": server.url})
    server.queue(Reply(b"", 302, {"Location": "/login"}))

    with pytest.raises(ModelHTTPError) as caught:
        client.complete(ASK, [])

    root = server.url.removesuffix("/v1")
    assert f"with HTTP 302 to {root}/login, which is not followed" in str(caught.value)
    assert str(caught.value).endswith(
        "set MINUTES_LOCAL_MODEL_URL to its root (the address before /chat/completions)"
    )
