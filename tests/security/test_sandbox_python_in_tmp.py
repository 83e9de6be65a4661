"""A Python that lives under /tmp (a CI clone's virtualenv) still runs inside the sandbox: the
sandbox's empty /tmp must not hide the interpreter's own directory."""

from __future__ import annotations

import tempfile
from pathlib import Path

from runtime import sandbox
from runtime.sandbox import Sandbox
from tests.security.sandboxing import needs_bwrap

pytestmark = needs_bwrap


def test_an_interpreter_under_tmp_is_visible_inside_the_sandbox(tmp_path, monkeypatch):
    with tempfile.TemporaryDirectory(dir="/tmp", prefix="minutes-python-") as root:
        program = Path(root) / "bin" / "agent-python"
        program.parent.mkdir()
        program.write_text("#!/bin/sh\necho from-under-tmp\n")
        program.chmod(0o755)
        monkeypatch.setattr(sandbox, "python_roots", lambda: [root])
        workspace, scratch = tmp_path / "r-x.workspace", tmp_path / "scratch"
        workspace.mkdir()
        scratch.mkdir()
        done = sandbox.run(
            [str(program)], workspace=workspace, scratch=scratch, timeout=30, sandbox=Sandbox()
        )
    assert (done.code, done.output) == (0, "from-under-tmp\n"), done.output
