"""Defence in depth: even handed settings that were never validated, the workspace code checks
that what it deletes, creates or copies resolves inside the workspaces root (and the shipped
templates) before touching anything."""

from __future__ import annotations

import os

import pytest

from runtime import workspace
from runtime.journal import MemoryJournal
from runtime.session import Session
from runtime.team import FlightConfig
from teams.repo_fix.harness import Harness
from teams.repo_fix.settings import RepoFixSettings
from teams.repos import template
from tests.security.sandboxing import files_under, victim


def test_preparing_a_workspace_outside_the_root_is_refused_and_deletes_nothing(tmp_path):
    workspaces = tmp_path / "workspaces"
    workspaces.mkdir()
    target = victim(tmp_path / "victim")
    with pytest.raises(ValueError, match="does not lie inside the workspaces root"):
        workspace.prepare(workspaces / ".." / "victim", template("parse-empty"), workspaces)
    assert files_under(target) == {"precious.txt": b"not yours\n"}


def test_preparing_from_a_template_outside_the_shipped_ones_copies_nothing(tmp_path):
    workspaces = tmp_path / "workspaces"
    with pytest.raises(ValueError, match=r"unknown template '\.\./\.\./config'"):
        workspace.prepare(workspaces / "r-x.workspace", template("../../config"), workspaces)
    with pytest.raises(ValueError, match="is not a template directory"):
        workspace.prepare(workspaces / "r-x.workspace", tmp_path / "nothing-here", workspaces)
    assert not workspaces.exists()


def test_a_workspace_that_is_a_link_to_another_is_not_wiped(tmp_path):
    workspaces = tmp_path / "workspaces"
    theirs = victim(workspaces / "r-victim.workspace")
    os.symlink(theirs, workspaces / "r-evil.workspace")
    with pytest.raises(ValueError, match="symbolic link"):
        workspace.prepare(workspaces / "r-evil.workspace", template("parse-empty"), workspaces)
    assert files_under(theirs) == {"precious.txt": b"not yours\n"}


def test_a_harness_given_unvalidated_settings_refuses_the_place_they_name(tmp_path):
    workspaces = tmp_path / "workspaces"
    target = victim(tmp_path / "victim")
    unchecked = FlightConfig.model_construct(
        scenario="first-flight",
        task="t",
        workspace="../victim",
        settings=RepoFixSettings(template="parse-empty"),
    )
    with pytest.raises(ValueError, match="not a workspace name"):
        Harness(Session(MemoryJournal(), "r-evil"), unchecked, {}, workspaces)
    assert files_under(target) == {"precious.txt": b"not yours\n"}
