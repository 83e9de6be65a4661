"""The zero-intelligence 2 x 2 on an OpenAI-compatible endpoint: the model side of each cell
(coder, reviewer) asks the endpoint, the ZI and rule sides never do, the harness's verdict per
cell is the same kind as on the scripted model, and every journal replays with the server down."""

from __future__ import annotations

import json

import pytest

from runtime import flight, zero
from runtime.cli import main
from runtime.events import ModelResponded
from runtime.jsonl import JsonlJournal
from tests.fakellm import Reply, completion, wire_call

pytestmark = pytest.mark.slow

FIX = '    fields = line.split(",")'
GUARDED = "    if not line.strip():\n        return []\n" + FIX
USAGE = {"prompt_tokens": 300, "completion_tokens": 20, "total_tokens": 320}


def answer(name: str, **args: object) -> Reply:
    return Reply(completion(None, [wire_call(name, json.dumps(args), f"call_{name}")], USAGE))


def coder() -> list[Reply]:
    return [
        answer("read_file", path="textparse/parser.py"),
        answer("edit_file", path="textparse/parser.py", old=FIX, new=GUARDED),
        answer("run_tests"),
        answer("done", summary="parse('') returns []; the suite is green"),
    ]


ACCEPT = answer("done", verdict="accept", reasons="the guard is right and the tests pass")


def test_the_two_by_two_on_an_endpoint_asks_it_only_for_the_model_cells(
    server, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("MINUTES_MODEL_BASE_URL", server.url)
    monkeypatch.setenv("MINUTES_MODEL", "m-zi")
    # In flying order: endpoint x endpoint, endpoint x rules, zi x endpoint, zi x rules.
    server.queue(*coder(), ACCEPT, *coder(), ACCEPT)
    argv = ["zi", "--team", "repo-fix", "--dir", str(tmp_path), "--model", "endpoint"]
    assert main([*argv, "--json"]) == 0
    cells = {(c["coder"], c["reviewer"]): c for c in json.loads(capsys.readouterr().out)}
    assert set(cells) == {
        ("endpoint", "endpoint"),
        ("endpoint", "rules"),
        ("zi", "endpoint"),
        ("zi", "rules"),
    }
    # The harness's verdicts: a fix with passing evidence ships whoever reviews it; the model
    # reviewer's ACCEPT of an empty change is integrated and only the harness's suite check
    # calls it failed; the rule reviewer refuses it, nothing is integrated.
    verdicts = {k: (c["status"], c["accept"], c["integrated"]) for k, c in cells.items()}
    assert verdicts == {
        ("endpoint", "endpoint"): ("done", True, 1),
        ("endpoint", "rules"): ("done", True, 1),
        ("zi", "endpoint"): ("failed", True, 1),
        ("zi", "rules"): ("escalated", False, 0),
    }
    assert cells[("zi", "endpoint")]["suite"]["failed"] > 0
    assert all(c["every_integration_cites_an_accept"] for c in cells.values())
    assert all(c["no_integration_on_failing_tests"] for c in cells.values())
    assert cells[("endpoint", "rules")]["models"] == {"coder": "m-zi", "reviewer": "rules"}
    # Every request the endpoint got is a model-side answer in a model cell's journal, asking
    # for the endpoint's model: 5 + 4 + 1, and none from a ZI or rule agent.
    answered = {}
    for c, r in cells:
        journal = JsonlJournal(tmp_path / f"zi-{c}-{r}.jsonl")
        run_id = flight.find_run(journal, journal.streams())
        on_endpoint = {a for a, b in (("coder", c), ("reviewer", r)) if b == "endpoint"}
        answered[(c, r)] = sum(
            1
            for rec in flight.run_records(journal, run_id)
            if isinstance(rec.event, ModelResponded) and rec.event.agent in on_endpoint
        )
    assert answered == {
        ("endpoint", "endpoint"): 5,
        ("endpoint", "rules"): 4,
        ("zi", "endpoint"): 1,
        ("zi", "rules"): 0,
    }
    assert len(server.requests) == sum(answered.values())
    assert {r.body["model"] for r in server.requests} == {"m-zi"}
    # The table names each cell's backends (the endpoint's with its model's name).
    rows = zero.table(list(cells.values())).splitlines()
    assert rows[1].split()[:3] == ["endpoint:m-zi", "endpoint:m-zi", "done"]
    assert rows[4].split()[:3] == ["zi", "rules", "escalated"]
    server.httpd.shutdown()
    for path in tmp_path.glob("zi-*.jsonl"):
        journal = JsonlJournal(path)
        assert flight.replay(journal, flight.find_run(journal, journal.streams())).identical


def test_a_refused_two_by_two_leaves_no_folder(tmp_path, monkeypatch, capsys):
    """A scenario the team has not, or the endpoint asked for where none is set, is refused
    before the folder is made: an empty one was left behind."""
    monkeypatch.delenv("MINUTES_MODEL_BASE_URL", raising=False)
    for extra in (["--scenario", "nope"], ["--model", "endpoint"]):
        where = tmp_path / "zi"
        assert main(["zi", "--team", "repo-fix", "--dir", str(where), *extra]) == 2
        assert capsys.readouterr().err.startswith("error: ")
        assert not where.exists()


def test_an_endpoint_down_in_a_cell_says_how_to_go_on(server, tmp_path, monkeypatch, capsys):
    """The first cell's model call went unanswered: the command said only that the endpoint
    did not answer (exit 4), with no word of the cell's journal or the cells not flown, and
    the same command again refused the folder."""
    monkeypatch.setenv("MINUTES_MODEL_BASE_URL", server.url)
    monkeypatch.setenv("MINUTES_MODEL", "m-zi")
    server.queue(*[Reply(b"bad gateway", 502, {"Retry-After": "0"})] * 5)
    argv = ["zi", "--team", "repo-fix", "--dir", str(tmp_path), "--model", "endpoint"]
    assert main(argv) == 4
    said = capsys.readouterr().err
    first = tmp_path / "zi-endpoint-endpoint.jsonl"
    assert "error: the model endpoint did not answer: gave up on POST" in said
    assert f"the cell rests at that call in {first}: `python -m runtime resume {first}`" in said
    rest = [tmp_path / f"zi-{c}-{r}.jsonl" for c, r in zero.cells_of("endpoint")[1:]]
    assert f"not flown: {', '.join(map(str, rest))}; run zi again with another --dir" in said
    assert first.exists() and not any(p.exists() for p in rest)
