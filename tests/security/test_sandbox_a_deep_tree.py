"""A tree 1,200 directories deep, made by an agent's test (real pytest in real bubblewrap): its
path is 2,400 characters, well within what the kernel takes, and past Python's recursion limit
for os.walk and shutil.rmtree. Each walk of the workspace raised RecursionError: the tester's
restore of its jurisdiction stopped before it put back the source file its run changed, the
candidate's commit failed at every retry, and the run's scratch directory was never removed."""

from __future__ import annotations

import tempfile

import pytest

from runtime import workspace
from runtime.agent_files import remove_tree
from tests.security.sandboxing import fresh_workspace, needs_bwrap, tool

pytestmark = needs_bwrap


@pytest.fixture(autouse=True)
def taken_away(tmp_path):
    """What the test leaves is removed here: pytest's own cleanup of its old temporary
    directories is shutil.rmtree's, and a deep tree left there fails it (RecursionError) in
    every later session of anyone sharing the directory."""
    yield
    for path in tmp_path.iterdir():
        if path.is_dir() and not path.is_symlink():
            remove_tree(path)


DEPTH = 1200
DEEP = (
    "import os\n\n\ndef test_deep():\n"
    "    os.chdir(os.environ.get('WHERE') or os.path.dirname(os.path.dirname(__file__)))\n"
    f"    for _ in range({DEPTH}):\n"
    "        os.mkdir('d')\n"
    "        os.chdir('d')\n"
    "    open('f', 'w').write('x')\n"
)


def test_a_testers_run_that_changes_a_source_file_beside_a_deep_tree_is_put_back(tmp_path):
    _, root = fresh_workspace(tmp_path)
    source = root / "textparse" / "parser.py"
    was = source.read_bytes()
    (root / "tests" / "test_deep.py").write_text(
        DEEP
        + "    here = os.path.abspath(__file__).split('/tests/')[0]\n"
        + "    open(os.path.join(here, 'textparse/parser.py'), 'w').write('hijacked\\n')\n"
    )
    said = tool(
        root, "run_tests", writable=lambda p: p.startswith("tests/"), target="tests/test_deep.py"
    )
    assert said["error"]["type"] == "OutsideJurisdiction", said
    assert "textparse/parser.py" in said["error"]["message"]
    assert source.read_bytes() == was


def test_a_coders_deep_tree_is_committed_and_listed(tmp_path):
    _, root = fresh_workspace(tmp_path)
    (root / "tests" / "test_deep.py").write_text(DEEP)
    assert tool(root, "run_tests", target="tests/test_deep.py")["result"]["passed"] == 1
    listed = tool(root, "list_files")["result"]
    assert "d/" * DEPTH + "f" in listed
    made = workspace.commit_candidate(root, "candidate/T1", "deep")
    assert made["files"] == ["d/" * DEPTH + "f", "tests/test_deep.py"]
    with workspace.checkout(root, made["commit"]) as tree:
        assert (tree / ("d/" * DEPTH) / "f").read_text() == "x"


def test_a_deep_tree_in_the_runs_scratch_directory_is_removed_with_it(tmp_path, monkeypatch):
    _, root = fresh_workspace(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    (root / "tests" / "test_deep.py").write_text(
        DEEP.replace("os.environ.get('WHERE')", "os.environ.get('HOME')")
    )
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    assert tool(root, "run_tests", target="tests/test_deep.py")["result"]["passed"] == 1
    assert list((tmp_path / "tmp").iterdir()) == []


def test_a_writers_worktree_holding_a_deep_tree_is_taken_away(tmp_path):
    _, root = fresh_workspace(tmp_path)
    workspace.add_worktree(root, "coder-a-T1")
    where = workspace.worktree_path(root, "coder-a-T1")
    (where / "tests" / "test_deep.py").write_text(DEEP)
    assert tool(where, "run_tests", target="tests/test_deep.py")["result"]["passed"] == 1
    workspace.remove_worktree(root, "coder-a-T1")
    assert not where.exists()
    assert workspace.git(root, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_a_tree_deeper_than_any_whole_path_is_taken_away_with_its_worktree(tmp_path):
    """1,100 directories of 4 letters: 5,500 characters of path, past PATH_MAX (4,096), which
    no call given the whole path reaches (shutil.rmtree's ENAMETOOLONG, at every retry)."""
    _, root = fresh_workspace(tmp_path)
    workspace.add_worktree(root, "coder-a-T1")
    where = workspace.worktree_path(root, "coder-a-T1")
    deeper = DEEP.replace("'d'", "'dddd'").replace(f"range({DEPTH})", "range(1100)")
    (where / "tests" / "test_deeper.py").write_text(deeper)
    assert tool(where, "run_tests", target="tests/test_deeper.py")["result"]["passed"] == 1
    workspace.remove_worktree(root, "coder-a-T1")
    assert not where.exists() and sorted(p.name for p in root.parent.iterdir()) == [root.name]
