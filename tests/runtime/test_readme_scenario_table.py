"""The table of teams and scenarios in docs/teams.md (the README's, before its reference sections
moved there) is made from the scenarios' own descriptions (the words the new-run form and the
CLI's help show): it fails here the moment the two disagree, and `python -m
runtime.scenario_table --write docs/teams.md` makes it again."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

from runtime import cli_fly, plugins, scenario_table

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / scenario_table.TARGET
FIX = f"python -m runtime.scenario_table --write {scenario_table.TARGET}"


def test_the_docs_scenario_table_is_the_one_the_scenarios_definitions_make():
    written = TABLE.read_text(encoding="utf-8")
    assert scenario_table.current(written) == scenario_table.block(), (
        f"{scenario_table.TARGET}'s scenario table and the scenarios' descriptions differ: run `{FIX}`"
    )


def test_the_marker_names_the_file_the_table_lives_in_and_no_other_copy_is_left():
    assert f"--write {scenario_table.TARGET}`" in scenario_table.BEGIN
    # A copy left in the README would go stale with nothing checking it.
    assert "<!-- scenarios" not in (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_scenario_is_a_row_with_the_words_the_cli_help_shows():
    help_text = cli_fly.scenarios_help()
    table = scenario_table.table()
    for team_name, team in plugins.teams().items():
        for name, scenario in team.scenarios.items():
            assert f"| `{team_name}` | `{name}` | {scenario.description} |" in table
            assert f"    {name}: {scenario.description}" in help_text


def test_a_changed_description_makes_the_table_disagree_until_it_is_written_again(
    monkeypatch, tmp_path
):
    team = plugins.teams()["support-desk"]
    changed = dataclasses.replace(team.scenarios["lost-update"], description="Two | agents.")
    monkeypatch.setitem(team.scenarios, "lost-update", changed)
    text = TABLE.read_text(encoding="utf-8")
    assert scenario_table.current(text) != scenario_table.block()

    copy = tmp_path / "teams.md"
    copy.write_text(text, encoding="utf-8")
    assert scenario_table.main(["--write", str(copy)]) == 0
    written = copy.read_text(encoding="utf-8")
    assert "| `support-desk` | `lost-update` | Two \\| agents. |" in written
    assert written.replace(scenario_table.current(written), "") == text.replace(
        scenario_table.current(text), ""
    )  # nothing else in the file moved


def test_a_file_with_no_marked_table_is_refused_and_left_alone(tmp_path):
    plain = tmp_path / "README.md"
    plain.write_text("# Minutes\n\nno table here\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "runtime.scenario_table", "--write", str(plain)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert "no scenario table marked by" in done.stderr
    assert plain.read_text(encoding="utf-8") == "# Minutes\n\nno table here\n"
