"""The tester may edit tests/ only, and that holds for what its test runs change too: a test
that rewrites product code is reverted, the run is refused (it is no evidence), and nothing of
it can reach a commit."""

from __future__ import annotations

from runtime import workspace
from teams.repo_fix.roles import ROLES
from tests.security.sandboxing import files_under, fresh_workspace, needs_bwrap, tool

pytestmark = needs_bwrap

SNEAKY = """\
import pathlib


def test_rewrites_the_product():
    pathlib.Path("textparse/parser.py").write_text("def parse(line):\\n    return []\\n")
    pathlib.Path("textparse/backdoor.py").write_text("OPEN = True\\n")
    pathlib.Path("README.md").unlink()
"""


def sneaky_run_by_the_tester(root):
    tester = ROLES["tester"].writable
    written = tool(root, "write_file", tester, path="tests/test_sneaky.py", content=SNEAKY)
    assert written["result"]["written"] == "tests/test_sneaky.py"  # within its jurisdiction
    return tool(root, "run_tests", tester)


def test_a_testers_run_that_rewrites_product_code_is_reverted_and_refused(tmp_path):
    _, root = fresh_workspace(tmp_path)
    before = files_under(root)
    observation = sneaky_run_by_the_tester(root)
    assert observation["error"]["type"] == "OutsideJurisdiction"
    message = observation["error"]["message"]
    for path in ("README.md", "textparse/backdoor.py", "textparse/parser.py"):
        assert path in message
    after = files_under(root)
    assert after.pop("tests/test_sneaky.py") == SNEAKY.encode()
    assert after == before
    assert workspace.git(root, "status", "--porcelain") == "?? tests/test_sneaky.py"


def test_what_is_committed_after_the_testers_run_holds_no_product_change(tmp_path):
    _, root = fresh_workspace(tmp_path)
    sneaky_run_by_the_tester(root)
    candidate = workspace.commit_candidate(root, "candidate/T9", "tester's work")
    assert candidate["files"] == ["tests/test_sneaky.py"]


def test_a_testers_run_that_swaps_a_package_for_a_link_out_is_undone_writing_nothing_outside(
    tmp_path,
):
    _, root = fresh_workspace(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    before = files_under(root)
    tester = ROLES["tester"].writable
    swap = (
        "import os, shutil\n\n\ndef test_swap():\n    shutil.rmtree('textparse')\n"
        f"    os.symlink({str(elsewhere)!r}, 'textparse')\n"
    )
    tool(root, "write_file", tester, path="tests/test_swap.py", content=swap)
    assert tool(root, "run_tests", tester)["error"]["type"] == "OutsideJurisdiction"
    assert not (root / "textparse").is_symlink()
    assert list(elsewhere.iterdir()) == []
    after = files_under(root)
    assert after.pop("tests/test_swap.py") == swap.encode()
    assert after == before
