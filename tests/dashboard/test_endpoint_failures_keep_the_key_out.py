"""A server that refuses the API key and quotes it back (as some vendors and proxies do:
"Incorrect API key provided: sk-..."): the run says the key was refused, and the key itself
appears in none of what the run keeps or shows (its journal, the run page, the API, the
export), where the server's answer was recorded verbatim."""

from __future__ import annotations

from runtime.openai_key import REDACTED
from services import runs
from tests.dashboard.conftest import drive
from tests.fakellm import Reply

KEY = "sk-live-0123456789abcdefSECRET"


def test_a_refused_key_quoted_back_by_the_server_is_kept_out_of_the_run(server, settings, as_owner):
    settings.MODELS = {
        "MINUTES_MODEL_BASE_URL": server.url,
        "MINUTES_MODEL": "some-model",
        "MINUTES_MODEL_API_KEY": KEY,
    }
    settings.MODEL_BASE_URL = server.url
    refusal = {
        "error": {"message": f"Incorrect API key provided: {KEY}.", "code": "invalid_api_key"}
    }
    server.queue(Reply(refusal, status=401))
    run_id = runs.start_run("solo", "solo-fix", by="owner", model="endpoint")

    assert drive(run_id) == "escalated"

    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"  # it was sent
    shown = {
        url: as_owner.get(url)
        for url in (f"/runs/{run_id}/", f"/api/runs/{run_id}", f"/api/runs/{run_id}/events")
    }
    export = as_owner.get(f"/runs/{run_id}/export.jsonl")
    texts = [r.content.decode() for r in shown.values()]
    texts.append(b"".join(export.streaming_content).decode())
    for text in texts:
        assert KEY not in text
    api = shown[f"/api/runs/{run_id}"].json()
    assert "HTTP 401" in api["reason"] and REDACTED in api["reason"]
