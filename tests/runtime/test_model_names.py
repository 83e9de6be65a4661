"""One agent on another endpoint model (`AGENT=endpoint:NAME`), when a run starts or from a
fork point: the request names that model, the journal records what each call asked for, and the
bill and its price follow it."""

from __future__ import annotations

import json
import shutil

import pytest

from runtime import flight, fork, fork_workspace, prices, streams, views
from runtime.jsonl import JsonlJournal
from runtime.team import Services
from tests.fakellm import Reply, completion, wire_call
from tests.runtime.test_fork import position_of

pytestmark = pytest.mark.slow

TABLE = prices.parse({"currency": "USD", "models": {"m-big": {"input": 3.0, "output": 15.0}}})
USAGE = {"prompt_tokens": 400, "completion_tokens": 30, "total_tokens": 430}


def accept(server) -> None:
    verdict = {"verdict": "accept", "reasons": "minimal guard; 2 passed, 0 failed"}
    server.queue(Reply(completion(None, [wire_call("done", json.dumps(verdict))], USAGE)))


def test_a_run_started_with_one_agent_on_a_named_model_asks_for_it(server, tmp_path):
    accept(server)
    env = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "m-default"}
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan("repo-fix", "first-flight", "r-n", models={"reviewer": "endpoint:m-big"})
    assert (config.models, config.model_names) == ({"reviewer": "endpoint"}, {"reviewer": "m-big"})
    outcome = flight.fly(journal, config, "r-n", tmp_path, services=Services(models=env))
    assert outcome.status == "done"
    assert [r.body["model"] for r in server.requests] == ["m-big"]
    bill = views.bill(flight.run_records(journal, "r-n"))
    assert bill["agents"]["reviewer"]["model"] == "m-big"
    money = prices.priced(bill, TABLE, True)
    assert money["agents"]["reviewer"]["cost"] == round((400 * 3.0 + 30 * 15.0) / 1e6, 6)
    server.httpd.shutdown()
    assert flight.replay(journal, "r-n").identical


def test_a_fork_hands_one_agent_to_a_named_model_from_its_point_on(fly_team, server, tmp_path):
    flown = fly_team("first-flight")
    path = tmp_path / "j.jsonl"
    shutil.copy(flown.path, path)
    root, run_id = flown.path.parent, flown.run_id
    journal = JsonlJournal(path)
    at = position_of(journal, run_id, "CandidateCommitted")
    changes = fork.Changes(models={"reviewer": "endpoint:m-big"})
    planned = fork.plan(fork.records_of(journal, run_id), run_id, "r-big", at, changes, "ana")
    assert planned.config.model_names == {"reviewer": "m-big"}
    fork.verify(journal, planned)
    fork_workspace.restore_workspace(planned, root)
    fork.write(journal, planned)
    accept(server)
    env = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "m-default"}
    outcome = flight.resume(journal, "r-big", root, services=Services(models=env))
    assert outcome.status == "done", outcome.reason
    assert [r.body["model"] for r in server.requests] == ["m-big"]
    asked = [
        r.event.served.asked
        for r in journal.read(streams.journal("r-big"))
        if r.event.kind == "ModelResponded" and r.event.agent == "reviewer"
    ]
    assert asked == ["m-big"]
    assert views.bill(flight.run_records(journal, "r-big"))["agents"]["reviewer"]["model"] == (
        "m-big"
    )
    server.httpd.shutdown()
    assert flight.replay(journal, "r-big").identical


def test_a_model_name_for_a_backend_that_is_not_the_endpoint_is_refused(fly_team, tmp_path):
    with pytest.raises(flight.FlightError, match="a model name is for the endpoint"):
        flight.plan("repo-fix", "first-flight", "r-x", models={"coder": "zi:clever"})
    with pytest.raises(flight.FlightError, match="model_names"):
        flight.plan("repo-fix", "first-flight", "r-x", models={"coder": "endpoint:has space"})
    flown = fly_team("first-flight")
    journal = JsonlJournal(flown.path)
    at = position_of(journal, flown.run_id, "CandidateCommitted")
    records = fork.records_of(journal, flown.run_id)
    changes = fork.Changes(models={"coder": "scripted:gpt"})
    with pytest.raises(fork.ForkRefused, match="coder: a model name is for the endpoint"):
        fork.plan(records, flown.run_id, "r-y", at, changes, "ana")


def test_an_endpoint_run_is_priced_by_the_model_its_calls_asked_for(server, tmp_path):
    # The settings name no model (the host's MINUTES_MODEL chose it): each call records it.
    accept(server)
    env = {"MINUTES_MODEL_BASE_URL": server.url, "MINUTES_MODEL": "m-big"}
    journal = JsonlJournal(tmp_path / "j.jsonl")
    config = flight.plan("repo-fix", "first-flight", "r-h", models={"reviewer": "endpoint"})
    assert config.model_name is None and not config.model_names
    flight.fly(journal, config, "r-h", tmp_path, services=Services(models=env))
    bill = views.bill(flight.run_records(journal, "r-h"))
    assert bill["agents"]["reviewer"]["model"] == "m-big"
    assert prices.priced(bill, TABLE, True)["agents"]["reviewer"]["cost"] is not None


def coder_answers(journal, run_id: str, total: int, asked: str | None) -> None:
    """One more coder call in the run, as the fork's own (after its RunForked)."""
    from runtime.events import ModelResponded, Served, Usage
    from runtime.journal import append_next

    served = Served(asked=asked) if asked else None
    call = ModelResponded(
        run_id=run_id,
        agent="coder",
        text="",
        tool_calls=[],
        usage=Usage(total=total, prompt=total - 30, completion=30),
        served=served,
    )
    append_next(journal, streams.journal(run_id), [call])


def coder_tokens(journal, run_id: str) -> int:
    return sum(
        r.event.usage.total
        for r in journal.read(streams.journal(run_id))
        if r.event.kind == "ModelResponded" and r.event.agent == "coder"
    )


def forked(journal, parent: str, child: str, at: int, models: dict[str, str]):
    planned = fork.plan(
        fork.records_of(journal, parent), parent, child, at, fork.Changes(models=models), "ana"
    )
    fork.write(journal, planned)
    return planned


def test_a_forks_copied_calls_are_priced_at_the_parents_models_not_the_forks(fly_team, tmp_path):
    """The fork hands the coder to a paid model after the coder has worked on the scripted one:
    its copied calls cost what they cost the parent (nothing), its own the paid price. The
    fork's copied TeamStarted carries the fork's settings, so only RunForked can say which
    models the prefix was asked of."""
    flown = fly_team("first-flight")
    path = tmp_path / "j.jsonl"
    shutil.copy(flown.path, path)
    journal, run_id = JsonlJournal(path), flown.run_id
    at = position_of(journal, run_id, "ToolReturned", agent="coder", tool="read_file")
    planned = forked(journal, run_id, "r-paid", at, {"coder": "endpoint:m-big"})
    assert planned.forked.parent_models is not None
    assert planned.forked.parent_models.models.get("coder", "scripted") == "scripted"
    copied = coder_tokens(journal, "r-paid")
    assert copied > 0  # the coder had answered on the scripted model before the fork point
    coder_answers(journal, "r-paid", 430, "m-big")

    bill = views.bill(flight.run_records(journal, "r-paid"))
    coder = bill["agents"]["coder"]
    assert coder["model"] == "m-big" and coder["tokens"] == copied + 430
    assert [(p["copied"], p["model"], p["tokens"]) for p in coder["parts"]] == [
        (True, "scripted", copied),
        (False, "m-big", 430),
    ]
    money = prices.priced(bill, TABLE, False)
    own = round((400 * 3.0 + 30 * 15.0) / 1e6, 6)
    assert money["agents"]["coder"]["cost"] == own  # not the copied tokens at m-big's price
    assert money["agents"]["coder"]["why"].startswith("before the fork, scripted")
    assert sum(c for c in money["tasks"].values() if c) == own
    # What the fork copied is its parent's, at the parent's model: nothing.
    inherited = {"agents": bill["inherited"]["agents"], "lines": []}
    assert bill["inherited"]["agents"]["coder"]["model"] == "scripted"
    assert prices.priced(inherited, TABLE, False)["total"] == 0.0


def test_a_fork_of_a_fork_prices_each_stretch_at_the_models_it_was_asked_of(fly_team, tmp_path):
    """Parent on scripted; a fork hands the coder to m-big and the coder answers there once;
    a fork of that fork hands it to m-small. Each stretch of the coder's calls costs its own
    model's price: the first fork's RunForked is copied into the second's journal."""
    flown = fly_team("first-flight")
    path = tmp_path / "j.jsonl"
    shutil.copy(flown.path, path)
    journal, run_id = JsonlJournal(path), flown.run_id
    at = position_of(journal, run_id, "ToolReturned", agent="coder", tool="read_file")
    forked(journal, run_id, "r-one", at, {"coder": "endpoint:m-big"})
    scripted = coder_tokens(journal, "r-one")
    coder_answers(journal, "r-one", 430, "m-big")
    last = journal.read(streams.journal("r-one"))[-1].position
    forked(journal, "r-one", "r-two", last, {"coder": "endpoint:m-small"})
    coder_answers(journal, "r-two", 130, "m-small")

    table = prices.parse(
        {"models": {"m-big": {"input": 3.0, "output": 15.0}, "m-small": {"input": 1, "output": 2}}}
    )
    bill = views.bill(flight.run_records(journal, "r-two"))
    parts = [(p["copied"], p["model"], p["tokens"]) for p in bill["agents"]["coder"]["parts"]]
    assert parts == [(True, "scripted", scripted), (True, "m-big", 430), (False, "m-small", 130)]
    big, small = (400 * 3.0 + 30 * 15.0) / 1e6, (100 * 1 + 30 * 2) / 1e6
    money = prices.priced(bill, table, False)
    assert money["agents"]["coder"]["cost"] == round(big + small, 6)
    inherited = {"agents": bill["inherited"]["agents"], "lines": []}
    assert prices.priced(inherited, table, False)["agents"]["coder"]["cost"] == round(big, 6)
