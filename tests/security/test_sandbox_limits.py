"""Agent code runs under resource limits: its output is capped, and it cannot take more memory,
write bigger files or burn more CPU time than it is given."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from runtime import sandbox, workspace
from runtime.model import ToolCall
from runtime.sandbox import Limits, Sandbox
from runtime.tools import Toolbox, execute
from tests.security.sandboxing import fresh_workspace, needs_bwrap

pytestmark = [needs_bwrap, pytest.mark.slow]  # real processes run to their limits


def python(tmp_path, code: str, **limits: int) -> sandbox.Finished:
    workspace, scratch = tmp_path / "r-x.workspace", tmp_path / "scratch"
    workspace.mkdir(exist_ok=True)
    scratch.mkdir(exist_ok=True)
    return sandbox.run(
        [sys.executable, "-c", code],
        workspace=workspace,
        scratch=scratch,
        timeout=60,
        sandbox=Sandbox(limits=Limits(**limits)),
    )


def test_a_flood_of_output_is_cut_at_the_cap(tmp_path):
    flood = "import sys\nfor _ in range(100): sys.stdout.write('x' * 100_000)"
    done = python(tmp_path, flood, output_bytes=65_536)
    assert done.code == 0 and done.truncated
    assert len(done.output) < 70_000 and "[output cut at 65536 bytes]" in done.output
    assert python(tmp_path, "print('ok')", output_bytes=65_536).output == "ok\n"


def test_memory_beyond_the_limit_is_refused(tmp_path):
    done = python(tmp_path, "bytearray(3 << 30)", memory_bytes=1 << 30)
    assert done.code == 1 and "MemoryError" in done.output


def test_a_file_beyond_the_limit_is_not_written(tmp_path):
    done = python(tmp_path, "open('big.bin', 'wb').write(b'x' * (8 << 20))", file_bytes=1 << 20)
    assert done.code == 1 and "File too large" in done.output  # Python ignores SIGXFSZ
    assert (tmp_path / "r-x.workspace" / "big.bin").stat().st_size <= 1 << 20


def test_cpu_time_beyond_the_limit_ends_the_run(tmp_path):
    done = python(tmp_path, "while True: pass", cpu_seconds=1)
    assert done.code in (128 + signal.SIGXCPU, 128 + signal.SIGKILL)


@pytest.mark.skipif(os.getuid() == 0, reason="the kernel does not apply RLIMIT_NPROC to root")
def test_processes_beyond_the_limit_are_refused(tmp_path):
    done = python(
        tmp_path,
        "import os, time\nfor _ in range(64):\n    if os.fork() == 0:\n        time.sleep(5)\n"
        "        os._exit(0)",
        processes=8,
    )
    assert "BlockingIOError" in done.output or "Resource temporarily unavailable" in done.output


ESCAPER = """\
import subprocess, sys, time


def test_never_ends():
    subprocess.Popen(
        [sys.executable, "-c", "import time\\nwhile True:\\n    open('beat', 'a').write('.')\\n"
         "    time.sleep(0.05)"],
        start_new_session=True,
    )
    time.sleep(3600)
"""


def test_a_run_that_never_ends_is_ended_with_everything_it_started(tmp_path):
    _, root = fresh_workspace(tmp_path)
    (root / "tests" / "test_escaper.py").write_text(ESCAPER)
    box = Toolbox(workspace.toolset(root, test_timeout=3))
    observation = execute(box.check(ToolCall(id="c", name="run_tests", args={}), "agent"), {})
    assert observation.error is not None and observation.error.type == "ToolTimeout"
    assert "pytest gave no answer within 3 s" in observation.error.message
    beats = (root / "beat").read_text()
    time.sleep(0.5)  # long enough for a survivor to beat again
    assert (root / "beat").read_text() == beats


FILL = """\
import errno, multiprocessing, os
multiprocessing.Lock()  # a semaphore in /dev/shm: what multiprocessing needs of it
print("before", sorted(os.listdir("/dev/shm")))
for where in ("/dev/shm", "/dev"):
    held = 0
    try:
        for i in range(10):
            with open(f"{where}/fill{i}", "wb") as f:
                f.write(b"x" * (4 << 20))
            held += 4 << 20
        print(where, "took", held)
    except OSError as exc:
        print(where, errno.errorcode[exc.errno], held)
"""


def test_dev_and_dev_shm_hold_no_more_memory_than_the_bound(tmp_path):
    """bwrap's /dev is a tmpfs sized at half the host's RAM, its pages counted by no rlimit:
    a test could hold gigabytes there for as long as it ran."""
    done = python(tmp_path, FILL, shm_bytes=8 << 20)
    said = dict(line.split(" ", 1) for line in done.output.splitlines())
    assert said["before"] == "[]"
    code, held = said["/dev/shm"].split()
    assert code == "ENOSPC" and int(held) <= 8 << 20
    assert said["/dev"] == "EROFS 0"
    # Each run has a /dev/shm of its own: nothing the last one wrote is held any longer.
    again = python(tmp_path, "import os; print(os.listdir('/dev/shm'))")
    assert again.output == "[]\n"
