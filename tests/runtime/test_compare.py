"""Comparing two runs: identical flights agree, different scenarios part where they should."""

from __future__ import annotations

import json

import pytest

from runtime import compare, flight, views
from runtime.cli import main
from runtime.jsonl import JsonlJournal

pytestmark = pytest.mark.slow


def records(flown):
    return flight.run_records(JsonlJournal(flown.path), flown.run_id)


def test_two_flights_of_one_scenario_take_the_same_steps(fly_team, tmp_path):
    first = fly_team("first-flight")
    # A second flight of the same scenario under another run id: new ids, new timestamps.
    run_id = "r-again"
    path = tmp_path / "again.jsonl"
    flight.fly(
        JsonlJournal(path), flight.plan("repo-fix", "first-flight", run_id), run_id, tmp_path
    )
    again = flight.run_records(JsonlJournal(path), run_id)
    result = compare.compare(records(first), again)
    assert result.identical and result.divergence is None
    assert result.steps["a"] == result.steps["b"] > 20
    assert all(row["delta"] == {"tokens": 0, "calls": 0} for row in result.bill)
    assert result.threads == {}


def test_first_flight_and_reject_loop_part_at_the_coders_first_answer(fly_team):
    a, b = records(fly_team("first-flight")), records(fly_team("reject-loop"))
    result = compare.compare(a, b)
    parted = result.divergence
    assert parted is not None and parted.why == "the runs differ here"
    assert (parted.a.agent, parted.a.what, parted.a.n) == ("coder", "model answer", 1)
    assert [c["tool"] for c in parted.a.content["calls"]] == ["run_tests"]
    assert [c["tool"] for c in parted.b.content["calls"]] == ["read_file"]
    # Everything before it was alike: the plan and the brief are the same in both runs.
    before = [s for s in compare.steps(a) if s.position < parted.a.position]
    theirs = {s.key: s for s in compare.steps(b)}
    assert before and all(theirs[s.key].content == s.content for s in before)
    # The outcome and why, the findings, and the threads from the divergence on.
    assert result.outcome["a"]["status"] == "done"
    assert result.outcome["b"]["status"] == "escalated"
    assert "rejected" in result.outcome["b"]["reason"]
    assert result.findings["only_b"] == ["reject_cap_reached"]
    handoffs = next(m for m in result.metrics if m["name"] == "assignment_handoff_count")
    assert handoffs["b"]["value"] > handoffs["a"]["value"]  # the coder was sent back
    assert [m["performative"] for m in result.threads["b"]].count("REJECT") == 2
    assert all(m["position"] >= parted.b.position for m in result.threads["b"])


def test_the_bill_rows_balance_with_each_runs_bill(fly_team):
    a, b = records(fly_team("first-flight")), records(fly_team("reject-loop"))
    rows = {r["agent"]: r for r in compare.compare(a, b).bill}
    for side, recs in (("a", a), ("b", b)):
        bill = views.bill(recs)
        assert rows["total"][side]["tokens"] == bill["spent"]
        for agent, line in bill["agents"].items():
            assert rows[agent][side] == {"tokens": line["tokens"], "calls": line["calls"]}
    assert rows["total"]["delta"]["tokens"] == views.bill(b)["spent"] - views.bill(a)["spent"]


def test_a_run_cut_short_parts_where_the_cut_is(fly_team):
    whole = records(fly_team("first-flight"))
    cut = whole[: len(whole) // 2]
    parted = compare.compare(whole, cut).divergence
    assert parted is not None and parted.why == "only run A has it" and parted.b is None
    assert parted.a.position > cut[-1].position
    # The other way round, the longer run is B and the step is B's.
    flipped = compare.compare(cut, whole).divergence
    assert flipped is not None and flipped.why == "only run B has it" and flipped.a is None
    assert flipped.b.key == parted.a.key


def test_a_journal_of_the_reference_runtime_compares_without_ids_or_model_calls(tmp_path):
    lines = [
        {"kind": "RunStarted", "agent": "coder", "task": "fix", "task_id": "T1"},
        {"kind": "ModelResponded", "agent": "coder", "usage": 40, "task_id": "T1"},
        {"kind": "ToolReturned", "agent": "coder", "tool": "run_tests", "result": "2 passed"},
        {"kind": "AgentFinished", "agent": "coder", "task_id": "T1"},
    ]
    other = [*lines[:2], {**lines[2], "result": "1 failed"}, lines[3]]
    sides = []
    for name, body in (("a", lines), ("b", other)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(line) + "\n" for line in body))
        sides.append(JsonlJournal(path).read("run-imported"))
    result = compare.compare(*sides)
    assert result.divergence is not None
    assert result.divergence.label == "coder's 1st tool result"
    assert result.calls == [
        {
            "agent": "coder",
            "a": {"calls": 1, "median_s": None, "total_s": None},
            "b": {"calls": 1, "median_s": None, "total_s": None},
        }
    ]


def test_the_command_line_prints_the_divergence_and_exits_one(fly_team, capsys):
    a, b = fly_team("first-flight"), fly_team("reject-loop")
    assert main(["diff", str(a.path), str(b.path)]) == 1
    out = capsys.readouterr().out
    assert "first divergence: coder's 1st model answer" in out
    assert "A: done" in out and "B: escalated" in out
    assert main(["diff", str(a.path), str(a.path), "--json"]) == 0
    same = json.loads(capsys.readouterr().out)
    assert same["identical"] is True and same["divergence"] is None


def test_the_command_line_names_a_missing_journal(tmp_path, capsys):
    assert main(["diff", str(tmp_path / "nope.jsonl"), str(tmp_path / "nope.jsonl")]) == 2
    assert "no journal at" in capsys.readouterr().err


def test_a_journal_of_several_runs_is_asked_which_by_its_own_side_option(
    fly_team, tmp_path, capsys
):
    """`diff A B` with --run-a and --run-b: a side holding several runs names the option of
    that side, where both said '--run', which diff does not take."""
    a, b = fly_team("first-flight"), fly_team("reject-loop")
    both = tmp_path / "both.jsonl"
    both.write_bytes(a.path.read_bytes() + b.path.read_bytes())
    assert main(["diff", str(both), str(a.path)]) == 2
    assert "holds several runs" in (err := capsys.readouterr().err) and "--run-a" in err
    assert main(["diff", str(a.path), str(both)]) == 2
    assert "name one with --run-b" in capsys.readouterr().err
    assert main(["diff", str(both), str(a.path), "--run-a", a.run_id]) == 0
