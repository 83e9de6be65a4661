"""A holder whose lease was taken over ends the tool runs its process has going (a pytest in
the sandbox): another worker now drives the run and replays the call, and the first copy
must not go on writing in the workspace. `sandbox.end_runs` kills them, process group and all;
the run returns as killed."""

from __future__ import annotations

import threading

from runtime import sandbox
from runtime.sandbox import Sandbox


def test_a_run_in_progress_is_killed_by_end_runs(tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    finished = []
    argv = ["sh", "-c", "sleep 60 & sleep 60"]  # a child of its own, in the run's group

    def run() -> None:
        kept = Sandbox(required=False)
        finished.append(
            sandbox.run(argv, workspace=tmp_path, scratch=scratch, timeout=60, sandbox=kept)
        )

    running = threading.Thread(target=run)
    running.start()
    for _ in range(1000):
        if sandbox._running:
            break
        running.join(0.01)
    assert sandbox.end_runs() == 1
    running.join(30)
    [done] = finished
    assert done.code == 128 + 9  # killed, not run to its end
    assert not sandbox._running
    assert sandbox.end_runs() == 0  # nothing left to end
