"""A web request never starts the local model server: the page and the API only ask whether it
answers, and when it does not they say how to start it, having recorded nothing."""

from __future__ import annotations

import socket

import pytest

from journal_store.models import RunSummary, StoredEvent
from services import local_model

pytestmark = pytest.mark.django_db

WHAT_TO_DO = ("manage.py demo --model local", "make local-model")


@pytest.fixture
def nobody_listens(settings) -> int:
    """A port of this machine with no model server behind it, as the local model's address."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    settings.MODELS = {**settings.MODELS, "MINUTES_LOCAL_MODEL_URL": f"http://127.0.0.1:{port}/v1"}
    return port


def listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_the_api_answers_503_with_how_to_start_the_model_and_starts_nothing(api, nobody_listens):
    response = api.post(
        "/api/runs",
        {"team": "solo", "scenario": "solo-fix", "model": "local"},
        content_type="application/json",
    )
    assert response.status_code == 503, response.content
    detail = response.json()["detail"]
    assert any(hint in detail for hint in WHAT_TO_DO), detail
    if local_model.missing() is None:  # installed here: it names where it looked
        assert f"127.0.0.1:{nobody_listens}" in detail
    assert not listening(nobody_listens)  # no server was started for the request
    assert StoredEvent.objects.count() == 0 and RunSummary.objects.count() == 0


def test_the_run_form_says_how_to_start_the_model_and_starts_nothing(as_owner, nobody_listens):
    response = as_owner.post(
        "/runs/new",
        {
            "team": "solo",
            "scenario": "solo-fix",
            "model": "local",
            "allowance": 5000,
            "max_turns": 4,
        },
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert any(hint in page for hint in WHAT_TO_DO), page
    assert not listening(nobody_listens)
    assert StoredEvent.objects.count() == 0 and RunSummary.objects.count() == 0


def test_a_local_run_is_started_once_a_model_server_answers(api, settings):
    """The check only asks: a server somebody else runs (here a stand-in answering /models)
    is enough, and nothing is started beside it."""
    import http.server
    import threading

    class Models(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b'{"data": [{"id": "local"}]}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Models)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        address = f"http://127.0.0.1:{server.server_port}/v1"
        settings.MODELS = {**settings.MODELS, "MINUTES_LOCAL_MODEL_URL": address}
        response = api.post(
            "/api/runs",
            {"team": "solo", "scenario": "solo-fix", "model": "local"},
            content_type="application/json",
        )
    finally:
        server.shutdown()
        server.server_close()
    assert response.status_code == 201, response.content
    assert StoredEvent.objects.filter(kind="TeamStarted").count() == 1
