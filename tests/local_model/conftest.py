"""One real local model server for the tests that need it, on a free port of its own."""

from __future__ import annotations

import os
import socket

import pytest

from services import local_model


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def local_server(tmp_path_factory):
    why = local_model.missing()
    if why:
        # CI counts a skip that says "not available" as a failure: there it must be installed.
        pytest.skip(f"local model not available: {why}")
    base = f"http://127.0.0.1:{free_port()}/v1"
    # One thread: the suite runs on two workers, so the server's second thread would fight
    # the other worker for a core (the reflection test, next to one busy process: 114 s and
    # 114 s with one thread, 124 s and 130 s with two, taken in turns). Reading prompts in too:
    # llama.cpp's default there is every core, and its threads wait for each other at every
    # layer, so one taken by the other worker stalls both (six prompts of 700 tokens on this
    # loaded machine: 131 s and 158 s on two, 46 s and 104 s on one, taken in turns).
    # Flash attention is on, as on every server LocalModelServer starts: reading prompts in is
    # where these tests' time goes (some 10 ms a token on one thread, against 20 ms for each
    # token written, and the prompts are ten times longer than replies).
    server = local_model.LocalModelServer(base, threads=1, batch_threads=1)
    server.log = tmp_path_factory.mktemp("local-model") / "server.log"
    server.start()
    previous = os.environ.get("MINUTES_LOCAL_MODEL_URL")
    os.environ["MINUTES_LOCAL_MODEL_URL"] = base
    yield server
    server.stop()
    if previous is None:
        os.environ.pop("MINUTES_LOCAL_MODEL_URL", None)
    else:
        os.environ["MINUTES_LOCAL_MODEL_URL"] = previous
