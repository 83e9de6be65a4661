"""A holder whose lease was taken over ends the tool runs its process has going (a pytest in
the sandbox): another worker now drives the run and replays the call, and the first copy
must not go on writing in the workspace. `children.end` kills its holding's, process group and
all; the run raises children.Ended, and no run of that holding starts until it is over
(`reopen`)."""

from __future__ import annotations

import shutil
import threading

import pytest

from runtime import children, sandbox
from runtime.sandbox import Sandbox

IN_BWRAP = pytest.param(
    True,
    marks=pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not here"),
    id="sandboxed",
)


@pytest.mark.parametrize("required", [IN_BWRAP, pytest.param(False, id="opted-out")])
def test_a_run_in_progress_is_killed_by_end(tmp_path, required):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    finished: list[object] = []
    argv = ["sh", "-c", "sleep 60 & sleep 60"]  # a child of its own, in the run's group
    kept = Sandbox(required=required)
    holding = object()  # the step's, whose lease is lost

    def run() -> None:
        children.enter(holding)  # the step's thread
        try:
            finished.append(
                sandbox.run(argv, workspace=tmp_path, scratch=scratch, timeout=60, sandbox=kept)
            )
        except children.Ended as exc:
            finished.append(exc)

    running = threading.Thread(target=run)
    running.start()
    for _ in range(1000):
        if children.running():
            break
        running.join(0.01)
    before = children.enter(holding)  # and the test's, where it runs next
    try:
        assert children.end(holding) == 1
        running.join(30)
        [done] = finished
        assert isinstance(done, children.Ended)  # killed, not run to its end
        assert str(done).startswith("the run was ended")
        assert children.running() == 0
        with pytest.raises(children.Ended, match="the run was not started"):
            sandbox.run(argv, workspace=tmp_path, scratch=scratch, timeout=60, sandbox=kept)
        assert children.end(holding) == 0  # nothing left to end
    finally:
        children.reopen(holding)
        children.enter(before)
    quick = sandbox.run(["true"], workspace=tmp_path, scratch=scratch, timeout=60, sandbox=kept)
    assert quick.code == 0  # the holding over, runs start again
