"""An MCP server's process ends with what started it: a start that fails ends it at once (and
reaps it) before the surface says so; a lost lease ends it (runtime/children.py), as it ends
git and the sandbox's runs; and the kernel ends it when the worker dies, SIGKILL included
(PR_SET_PDEATHSIG, runtime/mcp/process.py). Each was left running: the SDK starts a server in
a session of its own, and one that ignores the end of its stdin outlived its worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from runtime import children
from runtime.mcp.client import McpSurface
from runtime.mcp.server import McpServer, ServerDegraded
from teams.triage.surface import support_servers
from tests.runtime.test_mcp import children as our_children
from tests.runtime.test_mcp import wait_until_gone

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; prctl"),
]

# Neither the end of its stdin nor SIGTERM ends it; it says its pid first, where it is told.
STUBBORN = textwrap.dedent(
    """
    import os, signal, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    while True:
        time.sleep(1)
    """
)


def stubborn(name: str, said: Path) -> McpServer:
    return McpServer(name, (sys.executable, "-c", STUBBORN, str(said)))


def alive(pid: int) -> bool:
    """Running: neither gone nor a zombie (an orphan's reaper may be slow to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(predicate, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_the_sdks_spawning_function_is_ours_on_the_sdk_we_install():
    """On another SDK the hook is left out (said in the log) rather than every import failing:
    here, on the one pyproject.toml installs, it must be in place for the tests below."""
    from mcp.client import stdio

    from runtime.mcp import process

    assert process.HOOKED and stdio._create_platform_compatible_process is process._spawn


def test_a_server_that_fails_its_start_is_ended_and_reaped_before_the_surface_says_so(tmp_path):
    said = tmp_path / "pid"
    before = set(our_children())
    with McpSurface([stubborn("mute", said)], start_timeout=1.0) as surface:
        assert said.exists()  # it did start
        assert wait_until_gone(set(our_children()) - before, timeout=0) == {}
        assert "no MCP handshake within 1 s" in surface.degraded()["mute"]


def test_a_lost_lease_ends_the_servers_started_under_it():
    holding = children.nested()
    outside = set(our_children())
    before = children.enter(holding)
    try:
        surface = McpSurface(support_servers(["kb"]))
    finally:
        children.enter(before)
    try:
        assert surface.degraded() == {}
        assert children.running(holding) == 1
        assert children.end(holding) == 1
        assert wait_until_gone(set(our_children()) - outside, timeout=5) == {}
        assert wait_for(lambda: children.running(holding) == 0, timeout=5)  # not its pid now
        with pytest.raises(ServerDegraded, match=r"kb\.search: .*its process was ended: this"):
            surface.call("kb.search", {"query": "refund"})
    finally:
        children.reopen(holding)
        surface.close()


def test_a_surface_a_workers_runs_share_is_no_one_steps():
    """The worker's shared surface (services/specialists.py) is made in the first step that
    needs it: counted as that step's, one run's lost lease killed the servers every run on
    the worker calls, and they stayed counted under that step once it was over."""
    holding = children.nested()
    before = children.enter(holding)
    try:
        surface = McpSurface(support_servers(["kb"]), shared=True)
    finally:
        children.enter(before)
    try:
        assert surface.degraded() == {}
        assert children.running(holding) == 0 and children.end(holding) == 0
        assert surface.call("kb.search", {"query": "refund"})
        assert surface.degraded() == {}
    finally:
        children.reopen(holding)
        surface.close()


def test_a_server_is_not_started_under_a_lease_already_lost():
    holding = children.nested()
    children.end(holding)
    before = children.enter(holding)
    try:
        with McpSurface(support_servers(["kb"])) as surface:
            assert "was not started" in surface.degraded()["kb"]
    finally:
        children.enter(before)
        children.reopen(holding)


OWNER = textwrap.dedent(
    """
    import sys
    from runtime.mcp.client import McpSurface
    from runtime.mcp.server import McpServer
    McpSurface([McpServer("stubborn", (sys.executable, "-c", sys.argv[1], sys.argv[2]))],
               start_timeout=120)
    """
)


def test_a_worker_killed_with_sigkill_takes_its_servers_with_it(tmp_path):
    said = tmp_path / "pid"
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    owner = subprocess.Popen([sys.executable, "-c", OWNER, STUBBORN, str(said)], env=env)
    server = None
    try:
        assert wait_for(said.exists), "the server never started"
        server = int(said.read_text())
        assert alive(server)
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        assert wait_for(lambda: not alive(server), timeout=10), "the server outlived its worker"
    finally:
        owner.kill()
        owner.wait()
        if server is not None and alive(server):
            os.kill(server, signal.SIGKILL)
