"""What an agent passes to run_tests is a test path inside its workspace and nothing else:
never one of pytest's options (a --basetemp pytest would wipe, a --junitxml it would write, a
plugin to load) nor a file of options (@file)."""

from __future__ import annotations

import pytest

from tests.security.sandboxing import files_under, fresh_workspace, needs_bwrap, tool, victim

pytestmark = needs_bwrap


@pytest.mark.parametrize(
    "target",
    [
        "--basetemp={victim}",
        "--junitxml={victim}/report.xml",
        "-p pytester",
        "-ppytester",
        "@tests/options.txt",
    ],
)
def test_a_target_that_is_an_option_is_refused_and_touches_nothing(tmp_path, target):
    _, root = fresh_workspace(tmp_path)
    theirs = victim(tmp_path / "victim")
    # what @tests/options.txt would feed pytest, had it been read
    (root / "tests" / "options.txt").write_text(f"--basetemp={theirs}\n")
    observation = tool(root, "run_tests", target=target.format(victim=theirs))
    assert observation["error"]["type"] == "PathRefused"
    assert "never options" in observation["error"]["message"]
    assert files_under(theirs) == {"precious.txt": b"not yours\n"}
