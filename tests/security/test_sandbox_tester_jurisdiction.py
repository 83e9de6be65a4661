"""The tester may edit tests/ only, and that holds for what its test runs change too: a test
that rewrites product code is reverted, the run is refused (it is no evidence), and nothing of
it can reach a commit."""

from __future__ import annotations

import os

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


LINKER = "import os\n\n\ndef test_link():\n    os.link('textparse/parser.py', 'tests/parser_too')\n"


def test_a_testers_run_that_hard_links_product_code_under_tests_is_undone_and_refused(tmp_path):
    # The link changes no byte of the parser, but a write to tests/parser_too would be one to
    # the parser: the run is refused, and the parser is a file of its own again.
    _, root = fresh_workspace(tmp_path)
    before = files_under(root)
    tester = ROLES["tester"].writable
    tool(root, "write_file", tester, path="tests/test_link.py", content=LINKER)
    ran = tool(root, "run_tests", tester, target="tests/test_link.py")
    assert ran["error"]["type"] == "OutsideJurisdiction"
    assert "textparse/parser.py" in ran["error"]["message"]
    assert (root / "textparse/parser.py").stat().st_nlink == 1
    tool(root, "write_file", tester, path="tests/parser_too", content="def parse(line):\n    1\n")
    assert files_under(root)["textparse/parser.py"] == before["textparse/parser.py"]


def test_the_file_tools_write_nothing_through_a_hard_link(tmp_path):
    _, root = fresh_workspace(tmp_path)
    parser = root / "textparse/parser.py"
    text = parser.read_text()
    os.link(parser, root / "tests/parser_too")  # as a run nobody confines could leave it
    tester = ROLES["tester"].writable
    wrote = tool(root, "write_file", tester, path="tests/parser_too", content="x = 1\n")
    edited = tool(root, "edit_file", tester, path="tests/parser_too", old="def", new="x")
    for refused in (wrote, edited):
        assert refused["error"]["type"] == "HardLinked"
        assert refused["error"]["message"].startswith("tests/parser_too is a hard link")
        assert "nothing was written" in refused["error"]["message"]
    assert parser.read_text() == text
