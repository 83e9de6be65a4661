"""A Django connection to PostgreSQL that goes silent, as one does when its server's host goes
away without a word (powered off, cut off by a firewall, forgotten by a NAT or a load balancer
in between): no reset, no reply, nothing.

A userspace proxy cannot show it, since its own kernel acknowledges whatever it is sent. So the
connection is made in a network namespace of its own (`unshare -n`), through a proxy there to
a connection to the server made outside it, and the namespace's loopback is then taken down:
from then on nothing the client sends is acknowledged, and nothing comes back.

Three silences:
- `unacknowledged`: the host goes, then the query is sent. Its bytes are never acknowledged.
- `acknowledged`: the proxy takes the query (its kernel acknowledges it) and passes nothing on,
  then the host goes: the client waits on a connection that looks idle.
- `unreachable`: the host is gone before the connection is made (the next page's or step's
  new connection, once the old one was given up). The namespace sends to an address on a veth
  link whose neighbour is set by hand, so nothing asks who has it and nothing answers.
And no silence, `slow`: the host stays, and its query takes longer than the bounds
(`SELECT pg_sleep(SLOW)`): its probes are answered, so it is not cut short.

`run()` is the test's side; `python -m tests.silent_database URL` measures Minutes' own bounds
(config/env.py SILENCE_BOUND) on all three, and takes about two minutes and a half."""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
CASES = ("unacknowledged", "acknowledged", "unreachable")
GONE = "10.9.9.2"  # the unreachable host, on a link of the namespace's own
SLOW = 5  # seconds a `slow` query takes


def namespace_command() -> list[str]:
    """A new network namespace: root makes one directly, anyone else inside a user namespace
    of their own, where they are root (the kernel must allow unprivileged ones)."""
    return ["unshare", "-n"] if os.geteuid() == 0 else ["unshare", "-rn"]


def namespaces_work() -> bool:
    try:
        done = subprocess.run(
            [*namespace_command(), "ip", "link", "set", "lo", "up"],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def run(url: str, case: str, wait: float, bound: dict[str, str] | None = None) -> dict:
    """The query `SELECT 1` made by Django, its connection's settings made by config/env.py
    from `url` (a postgres:// URL), on a connection that goes silent as `case` says. `bound`
    stands in for Minutes' SILENCE_BOUND, if given (the test's, shorter). What the query raised
    and after how many seconds, or {"raised": None} if it was still waiting after `wait`."""
    parts = urlsplit(url)
    upstream = socket.create_connection((parts.hostname, parts.port or 5432), timeout=10)
    upstream.settimeout(None)
    command = [
        *namespace_command(),
        sys.executable,
        "-m",
        "tests.silent_database",
        "--child",
        "--upstream",
        str(upstream.fileno()),
        "--url",
        url,
        "--bound",
        json.dumps(bound),
        "--case",
        case,
    ]
    try:
        done = subprocess.run(
            command,
            cwd=ROOT,
            pass_fds=[upstream.fileno()],
            capture_output=True,
            text=True,
            timeout=wait,
        )
    except subprocess.TimeoutExpired:
        return {"raised": None}
    finally:
        upstream.close()
    if done.returncode != 0:
        raise RuntimeError(f"the silent connection's process failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- inside the namespace ----------------------------------------------------------------------


def pump(source: socket.socket, sink: socket.socket, hold: threading.Event | None) -> None:
    """Pass what `source` sends to `sink`; while `hold` is set, take it and pass nothing on."""
    while chunk := source.recv(65536):
        if hold is None or not hold.is_set():
            sink.sendall(chunk)


def proxy(listener: socket.socket, upstream: socket.socket, hold: threading.Event) -> None:
    client, _ = listener.accept()
    threading.Thread(target=pump, args=(upstream, client, None), daemon=True).start()
    pump(client, upstream, hold)


def loopback_down() -> None:
    subprocess.run(["ip", "link", "set", "lo", "down"], check=True)


def link_to_nobody() -> str | None:
    """A link whose other end drops what it is sent, with GONE's neighbour entry set by hand:
    a connection to GONE is sent, and never heard from. Why it cannot be made, if it cannot."""
    for command in (
        "ip link add silent type veth peer name nobody",
        "ip addr add 10.9.9.1/24 dev silent",
        "ip link set silent up",
        "ip link set nobody up",
        f"ip neigh add {GONE} lladdr 02:00:00:00:00:02 dev silent",
    ):
        done = subprocess.run(command.split(), capture_output=True, text=True)
        if done.returncode != 0:
            return f"`{command}` failed: {done.stderr.strip()}"
    return None


def child(upstream_fd: int, url: str, bound: dict[str, str] | None, case: str) -> None:
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    upstream = socket.socket(fileno=upstream_fd)
    listener = socket.create_server(("127.0.0.1", 0))
    hold = threading.Event()
    threading.Thread(target=proxy, args=(listener, upstream, hold), daemon=True).start()

    import django
    from django.conf import settings

    from config import env

    if bound is not None:
        env.SILENCE_BOUND = bound
    parts = urlsplit(url)
    host = f"127.0.0.1:{listener.getsockname()[1]}"
    if case == "unreachable":
        if why := link_to_nobody():
            print(json.dumps({"raised": "skipped", "said": why}), flush=True)
            os._exit(0)
        host = f"{GONE}:5432"
    user = parts.netloc.rpartition("@")[0]
    local = f"postgres://{user}{'@' if user else ''}{host}{parts.path}"
    settings.configure(DATABASES={"default": env.database(local, ROOT)}, USE_TZ=True)
    django.setup()
    from django.db import connection

    if case != "unreachable":
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")  # connected, and heard from
    if case == "unacknowledged":
        loopback_down()
    elif case == "acknowledged":
        hold.set()
        threading.Timer(0.5, loopback_down).start()
    began = time.monotonic()
    try:
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT pg_sleep({SLOW})" if case == "slow" else "SELECT 1")
        found = {"raised": "nothing", "said": ""}
    except Exception as exc:  # what it raised is the finding
        found = {"raised": type(exc).__name__, "said": str(exc)[:300]}
    found["seconds"] = round(time.monotonic() - began, 1)
    print(json.dumps(found), flush=True)
    os._exit(0)  # the proxy's threads are blocked on dead sockets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url", nargs="?", help="postgres://user@host:port/name (measure)")
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--upstream", type=int)
    parser.add_argument("--url", dest="child_url")
    parser.add_argument("--bound", type=json.loads, default=None)
    parser.add_argument("--case", choices=[*CASES, "slow"])
    args = parser.parse_args()
    if args.child:
        child(args.upstream, args.child_url, args.bound, args.case)
        return
    if not args.url:
        parser.error("give the postgres:// URL of a server to measure against")
    for case in CASES:
        print(case, run(args.url, case, wait=300), flush=True)


if __name__ == "__main__":
    main()
