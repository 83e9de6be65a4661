"""A run's settings name places on the server's disk: its workspace and its template. Settings
that point anywhere but the run's own workspace and a shipped template are refused where they
come in (planning, resuming, replaying), with the field named, before anything is touched."""

from __future__ import annotations

import pytest

from runtime import flight
from tests.security.sandboxing import files_under, journal_with, victim


def test_a_run_id_that_climbs_out_of_the_workspaces_is_refused_when_the_run_is_planned(tmp_path):
    with pytest.raises(flight.FlightError, match=r"field 'workspace'"):
        flight.plan("repo-fix", "first-flight", "../../x")
    assert files_under(tmp_path) == {}


def test_resuming_a_journal_whose_workspace_climbs_out_deletes_nothing(tmp_path):
    target = victim(tmp_path / "victim")
    workspaces = tmp_path / "server" / "workspaces"
    journal = journal_with(tmp_path / "evil.jsonl", "r-evil", workspace="../../victim")
    with pytest.raises(flight.FlightError, match=r"field 'workspace'"):
        flight.resume(journal, "r-evil", workspaces)
    assert files_under(target) == {"precious.txt": b"not yours\n"}
    assert not workspaces.exists()


def test_resuming_a_journal_whose_template_climbs_out_copies_nothing(tmp_path):
    workspaces = tmp_path / "workspaces"
    journal = journal_with(tmp_path / "evil.jsonl", "r-evil", template="../../config")
    with pytest.raises(
        flight.FlightError,
        match=r"field 'settings.template': .*unknown template '../../config'",
    ):
        flight.resume(journal, "r-evil", workspaces)
    assert not workspaces.exists()


def test_resuming_a_journal_that_names_another_runs_workspace_leaves_it_alone(tmp_path):
    workspaces = tmp_path / "workspaces"
    theirs = victim(workspaces / "r-victim.workspace")
    journal = journal_with(tmp_path / "evil.jsonl", "r-evil", workspace="r-victim.workspace")
    with pytest.raises(flight.FlightError, match=r"field 'workspace'.*not this run's workspace"):
        flight.resume(journal, "r-evil", workspaces)
    assert files_under(theirs) == {"precious.txt": b"not yours\n"}
    assert sorted(p.name for p in workspaces.iterdir()) == ["r-victim.workspace"]


def test_replaying_such_a_journal_is_refused_with_the_field_named(tmp_path):
    journal = journal_with(tmp_path / "evil.jsonl", "r-evil", workspace="../../../etc")
    with pytest.raises(flight.FlightError, match=r"run r-evil: unreadable settings.*'workspace'"):
        flight.replay(journal, "r-evil")
