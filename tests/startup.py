"""Start Django's settings in a process of their own, for tests of what a bad setting does at
start (the check is process-wide, and a failing import cannot be undone in the test's process)."""

from __future__ import annotations

import os
import subprocess
import sys


def refused(**environ: str) -> str:
    """What a start with these environment variables prints when it fails (it must fail)."""
    env = {**os.environ, **environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    proc = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert proc.returncode != 0, "the settings were accepted"
    return proc.stderr
