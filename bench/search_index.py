"""The search projector's cost on a 20,000-event run: what indexing the run's documents takes
(journal_store/search.py `index`: each event's text gathered, folded, and inserted), in
batches of 500 rows as a catch-up applies them, and the text alone (`text_of`, no database).

The run is a coder's rounds (a request, three read_file calls with ~300 bytes of result, an
edit, a test run, a DONE, a review): one event in ten carries words written otherwise than
NFKC writes them (full-width letters, a ligature), the rest ASCII prose and code. Each figure
is the best of --repeats passes (the index cleared before each), in ms and events/s, before
(the text indexed as the events hold it) and after (folded with NFKC), taken in turns.

Production settings (MINUTES_DEBUG=0), SQLite (WAL, a file in a temp dir).

    PYTHONPATH=. .venv/bin/python bench/search_index.py [--events 20000] [--repeats 5] [--cpu]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.production_env import setup  # noqa: E402

parser = argparse.ArgumentParser(
    description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
)
parser.add_argument("--events", type=int, default=20_000, help="events in the run")
parser.add_argument("--repeats", type=int, default=5, help="passes timed, best kept")
parser.add_argument("--cpu", action="store_true", help="this process's CPU time, not the clock")
parser.add_argument(
    "--after-first", action="store_true", help="in each turn, after before before (the order)"
)
ARGS = parser.parse_args()
clock = time.process_time if ARGS.cpu else time.perf_counter

setup("search")

from django.core.management import call_command  # noqa: E402

from journal_store import search  # noqa: E402
from journal_store.journal import DjangoJournal  # noqa: E402
from runtime import events as ev  # noqa: E402

CONTENT = "def parse(text):\n    return [line.split(',') for line in text.splitlines()]\n" * 4
# Written otherwise than NFKC writes it: "fix" and "caf" in full-width letters, ligatures.
WIDE = "\uff46\uff49\uff58 the ﬁle parser: \uff43\uff41\uff46é ﬂow "
BATCH = 500


def events(run_id: str, size: int) -> list[ev.Event]:
    out: list[ev.Event] = [
        ev.TeamStarted(run_id=run_id, team="repo-fix", scenario="long-run", task="fix it")
    ]
    n = 0
    while len(out) < size:
        n += 1
        common = {"agent": "coder", "task_id": "T1", "turn": n}
        call = f"call-{n}"
        text = WIDE if n % 10 == 0 else f"round {n}: the edge case is still open"
        out += [
            ev.MessageSent(
                run_id=run_id,
                task_id="T1",
                message_id=f"m-{n}",
                performative="request",
                sender="orchestrator",
                recipient="coder",
                payload={"text": text},
            ),
            ev.ToolDispatched(
                run_id=run_id, **common, tool="read_file", call_id=call, args={"path": "p.py"}
            ),
            ev.ToolReturned(
                run_id=run_id, **common, tool="read_file", call_id=call, result={"c": CONTENT}
            ),
        ]
    return out[:size]


def main() -> None:
    call_command("migrate", verbosity=0)
    journal = DjangoJournal()
    stored = events("r-search", ARGS.events)
    for start in range(0, len(stored), BATCH):
        journal.append("run-r-search", stored[start : start + BATCH], start)
    rows = list(journal.rows("WHERE run_id = %s ORDER BY position", ["r-search"]))
    assert len(rows) == ARGS.events, len(rows)
    index = {"before": float("inf"), "after": float("inf")}
    text = dict(index)
    found: dict[str, bool] = {}
    real = search.folded
    for _ in range(ARGS.repeats):
        # Taken in turns: before (the text as the events hold it, as search.py indexed it
        # before folding) and after (folded with NFKC).
        turns = [("before", lambda text: text), ("after", real)]
        for name, fold in turns[::-1] if ARGS.after_first else turns:
            search.folded = fold  # type: ignore[assignment]
            search.clear("default")
            started = clock()
            for start in range(0, len(rows), BATCH):
                search.index(rows[start : start + BATCH], "default")
            index[name] = min(index[name], clock() - started)
            started = clock()
            for row in rows:
                search.text_of(row[search.DATA])
            text[name] = min(text[name], clock() - started)
            # Found by the words as NFKC writes them: folded, and not otherwise.
            found[name] = bool(search.search("file cafe", run_id="r-search", limit=1))
    print(f"events {len(rows)}, repeats {ARGS.repeats}, {'CPU' if ARGS.cpu else 'wall'} time")
    for name in index:
        took, gathered = index[name], text[name]
        print(
            f"{name:6} index {took * 1000:7.1f} ms ({len(rows) / took:8,.0f} events/s), "
            f"text_of {gathered * 1000:6.1f} ms ({len(rows) / gathered:9,.0f} events/s)"
        )
    print(f"'file cafe' finds the full-width and ligature text: {found}")


if __name__ == "__main__":
    main()
