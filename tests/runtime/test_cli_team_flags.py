"""The command line flies the installed teams without naming one: a team's flags are the
options it declares, and a team flown without --scenario flies its own first scenario."""

from __future__ import annotations

import json

import pytest

from runtime.cli import main
from runtime.jsonl import JsonlJournal


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_team_without_a_scenario_flies_its_own_first(tmp_path, capsys):
    path = tmp_path / "desk.jsonl"
    code, out, err = run(capsys, "fly", "--team", "support-desk", "--journal", str(path), "--json")
    assert code == 0, err
    [started] = [r.event for r in JsonlJournal(path).read(f"run-{json.loads(out)['run_id']}")][:1]
    assert (started.team, started.scenario) == ("support-desk", "double-refund")


def test_a_teams_own_flag_sets_its_setting(tmp_path, capsys):
    path = tmp_path / "desk.jsonl"
    argv = ["fly", "--team", "support-desk", "--order", "Z-9", "--journal", str(path), "--json"]
    code, _, err = run(capsys, *argv)
    assert code == 0, err
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    first = next(e for e in lines if e["kind"] == "TeamStarted")  # after the run's lease
    assert first["config"]["settings"]["desk"]["order_id"] == "Z-9"


def test_another_teams_flag_is_refused_in_that_teams_words_and_nothing_is_written(tmp_path, capsys):
    path = tmp_path / "solo.jsonl"
    argv = ["fly", "--team", "solo", "--order", "Z-9", "--journal", str(path)]
    code, _, err = run(capsys, *argv)
    assert code == 2 and "team 'solo' works on no orders (only support-desk does)" in err
    code, _, err = run(capsys, "fly", "--team", "solo", "--bidding", "--journal", str(path))
    assert code == 2 and "team 'solo' has no contract-net bidding (only repo-fix bids)" in err
    assert not path.exists() or path.read_text() == ""


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--votes", "-1"], "argument --votes: must be 1, 3 or 5, not -1"),
        (["--votes", "2"], "argument --votes: must be 1, 3 or 5, not 2"),
        (
            ["--votes", "999999999999999999999999"],
            "argument --votes: must be 1, 3 or 5, not 999,999,999,999,999,999,999,999",
        ),
        (["--votes", "x"], "argument --votes: not a whole number: 'x'"),
        (["--max-rounds", "0"], "argument --max-rounds: must be from 1 to 10, not 0"),
        (["--max-rounds", "11"], "argument --max-rounds: must be from 1 to 10, not 11"),
    ],
)
def test_a_teams_number_flag_out_of_range_is_refused_naming_the_flag(tmp_path, capsys, argv, said):
    """Held by argparse to the values the team's settings allow, as the core flags are: a plain
    int let the settings' check say "bad settings: field 'settings.votes'" (or "exceeded maximum
    size"), and --max-rounds 0 flew with the default 3 (a 0 was taken for a flag not given)."""
    path = tmp_path / "fix.jsonl"
    with pytest.raises(SystemExit) as exited:
        main(["fly", "--team", "repo-fix", "--journal", str(path), *argv])
    err = capsys.readouterr().err
    assert exited.value.code == 2
    assert said in err and "bad settings" not in err
    assert not path.exists()
