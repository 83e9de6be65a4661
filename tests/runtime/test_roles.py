"""The views read who writes and who reviews from the run's team, not from agents' names."""

from __future__ import annotations

import dataclasses
from typing import Literal

import pytest

from runtime import plugins, roles, views
from runtime.diagnose import diagnose
from runtime.events import MessageSent, RunStarted, TeamStarted
from runtime.journal import MemoryJournal
from runtime.team import TeamSettings


class PressSettings(TeamSettings):
    team: Literal["press"] = "press"


@pytest.fixture
def press():
    """A team of our own whose writer is the author and whose reviewer is the editor."""
    solo = plugins.teams()["solo"]
    team = dataclasses.replace(
        solo,
        name="press",
        agents=("author", "editor"),
        settings=PressSettings,
        roles={"author": "writes", "editor": "reviews"},
    )
    plugins.teams()["press"] = team  # what an installed distribution's entry point would add
    yield team
    del plugins.teams()["press"]


def journal_of(team: str, writer: str, reviewer: str):
    run = "r-press"
    journal = MemoryJournal()
    journal.append(
        f"run-{run}",
        [
            TeamStarted(run_id=run, team=team, scenario="s", task="t", config={}),
            RunStarted(run_id=run, agent=writer, task="write it", task_id="T1"),
            MessageSent(
                run_id=run, sender=writer, recipient="lead", performative="DONE", task_id="T1"
            ),
            MessageSent(
                run_id=run, sender=reviewer, recipient=writer, performative="ACCEPT", task_id="T1"
            ),
        ],
        0,
    )
    return journal.read(f"run-{run}")


def test_a_teams_own_writer_and_reviewer_are_read_from_the_team(press):
    records = journal_of("press", "author", "editor")
    kinds = [f["kind"] for f in diagnose(records)]
    assert "done_without_evidence" in kinds  # the author said DONE without testing
    assert views.resume_point(records[:3])["stage"] == "review"  # after the author's DONE
    assert views.resume_point(records)["stage"] == "verify"  # after the editor's ACCEPT


def test_the_same_names_in_a_team_that_gives_them_no_role_are_not_read_as_roles(press):
    records = journal_of("solo", "author", "editor")  # solo's only writer is its coder
    assert "done_without_evidence" not in [f["kind"] for f in diagnose(records)]
    assert views.resume_point(records)["stage"] == "plan"


def test_a_journal_of_a_team_not_installed_here_reads_by_minutes_naming():
    records = journal_of("someone-elses", "coder", "reviewer")
    assert "done_without_evidence" in [f["kind"] for f in diagnose(records)]
    assert views.resume_point(records)["stage"] == "verify"
    assert roles.has(roles.CONVENTION, "coder-b", "writes")  # a parallel coder is a coder
    assert not roles.has(roles.CONVENTION, "coders", "writes")
