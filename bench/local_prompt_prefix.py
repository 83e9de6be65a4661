"""What the local model server's prompt cache saves a step: prompt tokens read in, and time.

A local step is two requests (OpenAIClient's pick-then-force): "which tool next?" without the
tools, then the same window with that tool forced. llama-cpp-python's chatml-function-calling
template writes the tool list (some 450 tokens) into the system message of the forced request
only, so the two prompts part at the end of the system text; a server that remembers only its
last prompt read each whole window twice a step. With its prompt cache
(services/local_model.py, `prompt_cache`) each request starts from the saved state of the last
request of its own kind, and reads in only what the window gained since.

The bench records the windows of one solo-fix flight, then replays them step by step through
the local client (temperature 0) on two servers in turns, round by round: `before` as
`manage.py demo` started it (no cache, every prompt token's logits kept, no flash attention),
`after` as it starts it now (the cache, the last token's logits only, flash attention). Each
round's windows begin differently ("Round n."), so no round finds another's prompts saved.
Prompt tokens come from the servers' logs (llama.cpp's "prompt eval ... / N tokens"), per
step; times are a step's wall time. Medians over rounds; needs `make local-model`.

    .venv/bin/python bench/local_prompt_prefix.py            # --rounds 3 --turns 4 --threads 1
    .venv/bin/python bench/local_prompt_prefix.py --same-flash   # the cache alone
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("MINUTES_DEBUG", "1")
os.environ.setdefault("MINUTES_HOME", tempfile.mkdtemp(prefix="minutes-bench-prefix-"))

import django  # noqa: E402

django.setup()

from runtime import flight  # noqa: E402
from runtime.jsonl import JsonlJournal  # noqa: E402
from runtime.model import ChatMessage, ToolSpec  # noqa: E402
from runtime.openai_client import OpenAIClient  # noqa: E402
from runtime.team import Services  # noqa: E402
from services import local_model  # noqa: E402

PORTS = {"before": 8793, "after": 8794}
EVALUATED = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
WRITTEN = re.compile(r"\s eval time =\s*[\d.]+ ms /\s*(\d+) runs")
Window = tuple[list[ChatMessage], list[ToolSpec]]


class AsBefore(local_model.LocalModelServer):
    """The server as it was started before its prompt cache: every prompt token's logits kept
    (the server's default), no cache (prompt_cache=None)."""

    def command(self) -> list[str]:
        command = super().command()
        at = command.index("--logits_all")
        return command[:at] + command[at + 2 :]


def settings_for(base: str) -> dict[str, str]:
    return {"MINUTES_LOCAL_MODEL_URL": base, "MINUTES_MODEL_MAX_TOKENS": "256"}


def record(base: str, turns: int) -> list[Window]:
    """The windows (and tools) one solo-fix flight asked the model, in order."""
    windows: list[Window] = []
    original = OpenAIClient.complete

    def complete(client, messages, tools):  # type: ignore[no-untyped-def]
        windows.append((list(messages), list(tools)))
        return original(client, messages, tools)

    OpenAIClient.complete = complete  # type: ignore[method-assign]
    try:
        work = Path(tempfile.mkdtemp(prefix="minutes-bench-prefix-"))
        config = flight.plan("solo", "solo-fix", "r-prefix", model="local", max_turns=turns)
        services = Services(models=settings_for(base))
        flight.fly(JsonlJournal(work / "j.jsonl"), config, "r-prefix", work / "ws", None, services)
    finally:
        OpenAIClient.complete = original  # type: ignore[method-assign]
    return windows


def marked(window: Window, round_: int) -> Window:
    """The window with its first message beginning "Round n.": nothing saved matches it."""
    messages, tools = window
    first = messages[0].model_copy(update={"content": f"Round {round_}. {messages[0].content}"})
    return [first, *messages[1:]], tools


def evaluated(log: Path, since: int) -> tuple[tuple[int, float, int], int]:
    """What the server did since byte `since` of its log: prompt tokens read in, seconds
    reading them, tokens written; and the log's end."""
    data = log.read_bytes()
    text = data[since:].decode("utf-8", "replace")
    found = EVALUATED.findall(text)
    read = sum(int(n) for _, n in found)
    seconds = sum(float(ms) for ms, _ in found) / 1000
    written = sum(int(n) for n in WRITTEN.findall(text))
    return (read, seconds, written), len(data)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--turns", type=int, default=4, help="turn cap of the recorded flight")
    parser.add_argument(
        "--same-flash", action="store_true", help="flash attention on both: the cache alone"
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="each server's threads, writing and reading in (the demo's: 2; one suits a busy "
        "machine, where a second thread waits on the other's every layer)",
    )
    args = parser.parse_args()
    if why := local_model.missing():
        sys.exit(why)
    work = Path(tempfile.mkdtemp(prefix="minutes-bench-prefix-"))
    servers = {
        "before": AsBefore(
            f"http://127.0.0.1:{PORTS['before']}/v1",
            threads=args.threads,
            batch_threads=args.threads,
            flash_attn=args.same_flash,
            prompt_cache=None,
        ),
        "after": local_model.LocalModelServer(
            f"http://127.0.0.1:{PORTS['after']}/v1",
            threads=args.threads,
            batch_threads=args.threads,
        ),
    }
    for name, server in servers.items():
        if local_model.healthy(server.base):
            # start() would share it: the figures would be another server's.
            sys.exit(f"a server already answers at {server.base}: stop it, or free the port")
        server.log = work / f"{name}.log"
        server.start()
    try:
        windows = record(servers["before"].base, args.turns)
        clients = {}
        for name, server in servers.items():
            clients[name] = OpenAIClient.local(settings_for(server.base))
            clients[name].temperature = 0.0  # the same prompts ask the same questions
        tokens: dict[str, list[tuple[int, float, int]]] = {name: [] for name in servers}
        seconds: dict[str, list[float]] = {name: [] for name in servers}
        for round_ in range(args.rounds):
            # Taken in turns, and each goes first every other round.
            order = list(servers) if round_ % 2 == 0 else list(reversed(servers))
            for name in order:
                log = servers[name].log
                _, at = evaluated(log, 0)
                started = time.perf_counter()
                for window in windows:
                    clients[name].complete(*marked(window, round_))
                took = time.perf_counter() - started
                read, _ = evaluated(log, at)
                tokens[name].append(read)
                seconds[name].append(took)
    finally:
        for server in servers.values():
            server.stop()
    steps = len(windows)
    print(f"{steps} steps of a solo-fix flight, replayed {args.rounds} times in turns")
    print(f"({args.threads} thread{'s' if args.threads > 1 else ''} a server)")
    flash = "on" if args.same_flash else "off"
    print(f"(before: no prompt cache, all logits, flash attention {flash};")
    print(" after: prompt cache, last logits, flash attention); medians per step")
    print(f"{'':24}{'before':>10}{'after':>10}{'after/before':>14}")
    rows = [
        ("prompt tokens read in", "{:.0f}", [[t[0] for t in tokens[n]] for n in servers]),
        ("seconds reading them", "{:.2f}", [[t[1] for t in tokens[n]] for n in servers]),
        ("tokens written", "{:.0f}", [[t[2] for t in tokens[n]] for n in servers]),
        ("seconds (wall)", "{:.2f}", [seconds[n] for n in servers]),
    ]
    for label, shape, (before, after) in rows:
        b, a = statistics.median(before) / steps, statistics.median(after) / steps
        ratio = f"{a / b:.2f}" if b else "-"
        print(f"{label:24}{shape.format(b):>10}{shape.format(a):>10}{ratio:>14}")


if __name__ == "__main__":
    main()
