"""Defence in depth: even handed settings that were never validated, the workspace code checks
that what it deletes, creates or copies resolves inside the workspaces root (and the shipped
templates) before touching anything."""

from __future__ import annotations

import os

import pytest

from runtime import workspace
from runtime.journal import MemoryJournal
from runtime.session import Session
from runtime.teams.base import FlightConfig
from runtime.teams.repo_fix import Harness
from tests.security.sandboxing import files_under, victim


def test_preparing_a_workspace_outside_the_root_is_refused_and_deletes_nothing(tmp_path):
    workspaces = tmp_path / "workspaces"
    workspaces.mkdir()
    target = victim(tmp_path / "victim")
    with pytest.raises(ValueError, match="does not lie inside the workspaces root"):
        workspace.prepare(workspaces / ".." / "victim", "parse-empty", workspaces)
    assert files_under(target) == {"precious.txt": b"not yours\n"}


def test_preparing_from_a_template_outside_the_shipped_ones_copies_nothing(tmp_path):
    workspaces = tmp_path / "workspaces"
    with pytest.raises(ValueError, match=r"unknown workspace template '\.\./\.\./config'"):
        workspace.prepare(workspaces / "r-x.workspace", "../../config", workspaces)
    assert not workspaces.exists()


def test_a_workspace_that_is_a_link_to_another_is_not_wiped(tmp_path):
    workspaces = tmp_path / "workspaces"
    theirs = victim(workspaces / "r-victim.workspace")
    os.symlink(theirs, workspaces / "r-evil.workspace")
    with pytest.raises(ValueError, match="symbolic link"):
        workspace.prepare(workspaces / "r-evil.workspace", "parse-empty", workspaces)
    assert files_under(theirs) == {"precious.txt": b"not yours\n"}


def test_a_harness_given_unvalidated_settings_refuses_the_place_they_name(tmp_path):
    workspaces = tmp_path / "workspaces"
    target = victim(tmp_path / "victim")
    unchecked = FlightConfig.model_construct(
        team="repo-fix",
        scenario="first-flight",
        task="t",
        template="parse-empty",
        workspace="../victim",
    )
    with pytest.raises(ValueError, match="not a workspace name"):
        Harness(Session(MemoryJournal(), "r-evil"), unchecked, {}, workspaces)
    assert files_under(target) == {"precious.txt": b"not yours\n"}
