"""MCP tools against the three real server subprocesses (orders, kb, policy): no mocks.

One surface is shared by the read-only tests (starting servers is the slow part); tests that
break a server (kill it, exhaust it, close it) start their own.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from runtime.mcp.client import McpServer, McpSurface
from runtime.model import ToolCall
from runtime.tools import Toolbox, ToolFailure, execute
from teams.triage.surface import support_servers

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc for children"),
]


@pytest.fixture(scope="module")
def surface():
    with McpSurface(support_servers(), call_timeout=10) as shared:
        yield shared


def observe(box: Toolbox, name: str, **args):
    """What the agent loop would see for this call: checked, executed, as an observation."""
    call = ToolCall(id="c1", name=name, args=args)
    try:
        tool = box.check(call, "worker")
    except ToolFailure as exc:
        return {"tool": name, "error": {"type": type(exc).__name__, "message": str(exc)}}
    return execute(tool, args).observation()


def error_type(observation) -> str:
    return observation["error"]["type"]


def children() -> dict[int, tuple[str, str]]:
    """Our child processes: pid -> (state letter, command line). Zombies included."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            # Any process's, whatever bytes it was given (another test's argv may not be UTF-8).
            stat = (entry / "stat").read_bytes().decode(errors="replace")
            raw = (entry / "cmdline").read_bytes()
            cmdline = raw.replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:  # it exited while we looked
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == os.getpid():
            found[int(entry.name)] = (state, cmdline)
    return found


def wait_until_gone(pids, timeout=5.0) -> dict[int, tuple[str, str]]:
    """Those of `pids` still our children (running or zombie) after up to `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        left = {pid: info for pid, info in children().items() if pid in pids}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def test_one_namespaced_surface_over_three_servers(surface):
    names = [tool.name for tool in surface.tools()]
    assert names == [
        "orders.lookup_order",
        "orders.list_orders",
        "orders.create_return_label",
        "orders.void_return_label",
        "orders.issue_credit",
        "orders.reverse_credit",
        "kb.search",
        "policy.check_refund_policy",
        "policy.policy_for",
        "policy.record_decision",
    ]
    assert surface.degraded() == {}
    assert all(tool.outside for tool in surface.tools())  # checked as hostile schemas
    spec = {s["name"]: s for s in surface.toolbox().specs()}["orders.lookup_order"]
    assert "Look up one order" in spec["description"]
    assert spec["parameters"]["properties"]["order_id"]["type"] == "string"
    assert spec["parameters"]["required"] == ["order_id"]


def test_a_worker_allowed_only_orders_sees_and_runs_only_orders(surface):
    box = surface.toolbox(allow=["orders.*"])
    assert [s["name"] for s in box.specs()][:2] == ["orders.lookup_order", "orders.list_orders"]
    assert all(s["name"].startswith("orders.") for s in box.specs())
    refused = observe(box, "kb.search", query="refund")
    assert error_type(refused) == "NotAllowed"
    assert surface.health()["kb"].calls == 0  # refused before it reached the server


def test_allowlists_mix_exact_names_and_server_patterns(surface):
    box = surface.toolbox(allow=["kb.search", "policy.policy_for"])
    assert [s["name"] for s in box.specs()] == ["kb.search", "policy.policy_for"]
    assert surface.expand(["orders.*", "kb.search"]) == {
        "orders.lookup_order",
        "orders.list_orders",
        "orders.create_return_label",
        "orders.void_return_label",
        "orders.issue_credit",
        "orders.reverse_credit",
        "kb.search",
    }
    with pytest.raises(ValueError, match="only exact names"):
        surface.expand(["orders.look*"])


def test_lookup_order_round_trip(surface):
    box = surface.toolbox(allow=["orders.*"])
    seen = observe(box, "orders.lookup_order", order_id="#b2001")
    assert seen["tool"] == "orders.lookup_order"
    order = seen["result"]["order"]
    assert (order["order_id"], order["status"], order["total_cents"]) == (
        "B2001",
        "delivered",
        3900,
    )
    missing = observe(box, "orders.lookup_order", order_id="Z9")
    assert missing["result"] == {"found": False, "order_id": "Z9", "message": "no order with id Z9"}
    listed = observe(box, "orders.list_orders", customer="Linus@Example.com")
    assert [o["order_id"] for o in listed["result"]["orders"]] == ["C3001", "C3002"]


def test_bad_arguments_are_refused_against_the_advertised_schema(surface):
    box = surface.toolbox(allow=["orders.*"])
    before = surface.health()["orders"].calls
    wrong_type = observe(box, "orders.lookup_order", order_id=1001)
    missing = observe(box, "orders.lookup_order")
    assert error_type(wrong_type) == error_type(missing) == "InvalidArguments"
    assert "order_id" in wrong_type["error"]["message"] + missing["error"]["message"]
    assert surface.health()["orders"].calls == before  # neither reached the server


def test_kb_search_ranks_by_keywords(surface):
    seen = observe(surface.toolbox(allow=["kb.*"]), "kb.search", query="my lamp arrived cracked")
    first = seen["result"]["articles"][0]
    assert (first["id"], first["title"]) == ("KB-104", "Damaged or broken items")
    assert first["snippet"]
    nothing = observe(surface.toolbox(), "kb.search", query="zebra")
    assert nothing["result"]["articles"] == []


def test_health_pings_every_server(surface):
    health = surface.health()
    assert {name: h.ok for name, h in health.items()} == {
        "orders": True,
        "kb": True,
        "policy": True,
    }
    assert health["kb"].tools == ("kb.search",)


def test_policy_is_up_but_every_call_fails_until_it_is_degraded():
    with McpSurface(support_servers(["policy"]), max_failures=3) as policy:
        assert policy.health()["policy"].ok  # it answers pings: up, and broken
        box = policy.toolbox(allow=["policy.*"])
        failures = [
            observe(box, "policy.check_refund_policy", order_id="A1001", amount_cents=4999),
            observe(box, "policy.policy_for", topic="refunds"),
            observe(box, "policy.policy_for", topic="returns"),
        ]
        assert [error_type(f) for f in failures] == ["McpToolError"] * 3
        assert "policy database unreachable" in failures[0]["error"]["message"]
        assert failures[0]["error"]["message"].startswith("policy.check_refund_policy")
        assert "3 consecutive failed calls" in policy.degraded()["policy"]

        refused = observe(box, "policy.policy_for", topic="shipping")
        assert error_type(refused) == "ServerDegraded"
        assert "server 'policy' is degraded" in refused["error"]["message"]
        assert policy.health()["policy"].calls == 3  # the refused call was never sent
        assert [s["name"] for s in box.specs()] == [  # still listed: see the module docstring
            "policy.check_refund_policy",
            "policy.policy_for",
            "policy.record_decision",
        ]


def test_a_server_killed_mid_session_degrades_and_the_others_keep_working():
    before = set(children())
    with McpSurface(support_servers(["orders", "kb"]), call_timeout=5) as pair:
        box = pair.toolbox()
        assert "result" in observe(box, "kb.search", query="refund")
        [kb_pid] = [
            pid
            for pid, (_, cmd) in children().items()
            if pid not in before and "teams/triage/servers/kb.py" in cmd
        ]
        os.kill(kb_pid, signal.SIGKILL)
        assert not wait_until_gone({kb_pid})

        # Unreachable, not timed out: the dead pipe is noticed, not waited out.
        dead = observe(box, "kb.search", query="refund")
        assert error_type(dead) == "ServerUnreachable"
        assert dead["error"]["message"].startswith("kb.search: server 'kb' is unreachable")

        health = pair.health()
        assert not health["kb"].ok and health["orders"].ok
        assert set(pair.degraded()) == {"kb"}
        assert error_type(observe(box, "kb.search", query="refund")) == "ServerDegraded"
        assert observe(box, "orders.lookup_order", order_id="A1001")["result"]["found"]


def test_health_notices_a_dead_server_before_any_call():
    before = set(children())
    with McpSurface(support_servers(["kb"])) as single:
        [pid] = [p for p in children() if p not in before]
        os.kill(pid, signal.SIGKILL)
        assert not wait_until_gone({pid})
        reason = single.health()["kb"].reason
        assert reason is not None and "connection closed" in reason


def test_a_server_that_cannot_start_is_degraded_and_the_rest_start():
    servers = [McpServer("ghost", ["/nonexistent/mcp-server"]), *support_servers(["orders"])]
    with McpSurface(servers) as mixed:
        assert "No such file" in mixed.degraded()["ghost"]
        assert {t.name.split(".")[0] for t in mixed.tools()} == {"orders"}
        box = mixed.toolbox(allow=["orders.*", "ghost.*"])
        assert observe(box, "orders.lookup_order", order_id="A1002")["result"]["found"]
        assert error_type(observe(box, "ghost.anything")) == "UnknownTool"


def test_a_server_that_never_answers_the_handshake_is_degraded_at_start():
    mute = McpServer("mute", [sys.executable, "-c", "import sys; sys.stdin.read()"])
    with McpSurface([mute], start_timeout=0.5) as surface:
        assert "no MCP handshake within 0.5 s" in surface.degraded()["mute"]


def test_a_call_timeout_shorter_than_a_servers_start_does_not_stop_it_starting():
    """The handshake is bounded by start_timeout alone: it was bounded by the call timeout as
    well (the session's read timeout), so on a busy machine a server that took longer than a
    call may to import its SDK was degraded at start though start_timeout gave it time."""
    with McpSurface(support_servers(["orders"]), call_timeout=0.01) as quick:
        assert quick.degraded() == {}
        assert {t.name for t in quick.tools()} >= {"orders.lookup_order"}


def test_close_leaves_no_child_processes():
    before = set(children())
    surface = McpSurface(support_servers(["orders", "kb"]))
    ours = set(children()) - before
    assert len(ours) == 2
    surface.close()
    assert wait_until_gone(ours, timeout=0) == {}  # reaped by close(), not later
    surface.close()  # twice is harmless
    gone = observe(surface.toolbox(), "orders.lookup_order", order_id="A1001")
    assert error_type(gone) == "ServerUnreachable"
