"""On the command line, a model endpoint that stays down ends the command, not the run: it
says the endpoint did not answer and how to go on (exit 4, as for an interrupt), the journal
ends at the unanswered call, and `resume` once the endpoint answers takes the run to its end."""

from __future__ import annotations

import json

from runtime import cli
from runtime.jsonl import JsonlJournal
from tests.fakellm import Reply, completion, wire_call


def test_the_command_says_how_to_go_on_and_resume_does(server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MINUTES_MODEL_BASE_URL", server.url)
    monkeypatch.setenv("MINUTES_MODEL", "some-model")
    server.queue(*[Reply(b"bad gateway", 502, {"Retry-After": "0"})] * 5)
    path = tmp_path / "j.jsonl"
    fly = ["fly", "--team", "solo", "--model", "endpoint", "--no-sandbox"]

    code = cli.main([*fly, "--journal", str(path), "--run-id", "r-out"])

    said = capsys.readouterr().err
    assert code == cli.EXIT_INTERRUPTED, said
    assert "error: the model endpoint did not answer: gave up on POST" in said
    assert "HTTP 502" in said and f"python -m runtime resume {path}" in said
    assert [r.event.kind for r in JsonlJournal(path).read("run-r-out")][-1] == "ModelCalled"

    server.queue(
        Reply(completion(None, [wire_call("list_files", '{"path": "."}', "c1")])),
        Reply(completion(None, [wire_call("done", '{"summary": "looked"}', "c2")])),
    )
    code = cli.main(["resume", str(path), "--no-sandbox", "--json"])

    outcome = json.loads(capsys.readouterr().out)
    assert outcome["status"] != "escalated", outcome
    assert cli.main(["replay", str(path)]) == cli.EXIT_OK
