"""Long-lived processes settle their heap once loaded (runtime/heap.py): what they imported is
frozen out of the collector's searches, and what they make afterwards is collected as before.
Each check runs in a process of its own, as the settling is process-wide."""

from __future__ import annotations

import os
import subprocess
import sys

REPORT = "import gc; print(gc.get_freeze_count(), gc.get_threshold()[0])"


def report_after(code: str) -> tuple[int, int]:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    proc = subprocess.run(
        [sys.executable, "-c", f"{code}\n{REPORT}"], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    frozen, young = proc.stdout.splitlines()[-1].split()  # the last line: REPORT's
    return int(frozen), int(young)


def test_a_plain_interpreter_freezes_nothing():
    assert report_after("pass") == (0, 700)


def test_a_worker_process_settles_its_heap_when_it_starts():
    # What Celery sends each worker process once it has started (config/celery.py).
    frozen, young = report_after(
        "import django; django.setup()\n"
        "from celery.signals import worker_process_init\n"
        "import config.celery\n"
        "worker_process_init.send(sender=None)"
    )
    assert frozen > 50_000  # Django and the application's modules, at least
    assert young == 700


def test_the_command_line_settles_before_it_runs_a_command():
    code = (
        "import runpy, sys\n"
        "sys.argv = ['runtime', '--help']\n"
        "try:\n"
        "    runpy.run_module('runtime', run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass"
    )
    frozen, young = report_after(code)
    assert frozen > 1_000
    assert young == 700
