"""`manage.py demo` end to end on the embedded broker: it starts a worker and the web server,
flies a sample run to its verdict, and Ctrl-C stops every process it started."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import urllib.request

import pytest
from django.db import connections

from tasks import runs
from tests.services import free_port
from tests.tasks.conftest import ROOT, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_demo_flies_a_sample_run_on_the_embedded_broker_and_stops_cleanly(tmp_path):
    port = free_port()
    home = tmp_path / "home"
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{connections['default'].settings_dict['NAME']}",
        "MINUTES_HOME": str(home),
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("CELERY_BROKER_URL", None)  # the embedded default: no server
    demo = subprocess.Popen(
        [sys.executable, "manage.py", "demo", "--port", str(port), "--workers", "1"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    try:

        def sample_started():
            line = demo.stdout.readline()
            lines.append(line)
            found = re.search(r"sample run (r-[0-9a-f]+)", line)
            if demo.poll() is not None:
                raise AssertionError("demo exited:\n" + "".join(lines) + demo.stdout.read())
            return found.group(1) if found else None

        run_id = wait_until(sample_started, 90, "the sample run")
        assert any("log in as 'demo' with password" in line for line in lines)
        wait_until(lambda: runs.status_of(run_id) != "running", 90, "the sample run to finish")
        assert runs.status_of(run_id) == "done"
        assert (home / "broker" / "queue").is_dir()  # the queue really was the filesystem one
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as page:
            assert page.status == 200
    finally:
        demo.send_signal(signal.SIGINT)
        demo.wait(30)
    leftovers = subprocess.run(["pgrep", "-f", str(home)], capture_output=True, text=True)
    assert leftovers.stdout == "", "processes the demo started are still running"
