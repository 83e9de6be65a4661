"""Minutes beside LangGraph's durable execution, on the same scripted loop, in one process.

The loop: each turn a canned model answer carrying a tool call (~200 bytes of arguments,
~50 tokens), then the tool's ~300-byte result; N turns, then one more after a "crash".

    Minutes     the agent loop (runtime/loop.py) with the scripted client, journalled to the
                embedded default: the Django journal on SQLite (WAL, synchronous=FULL), five
                events a turn in two commits (the model call; the answer with its tool's
                dispatch; the tool's result goes with the next model call), with Django's
                settings as deployed (MINUTES_DEBUG=0: no query log).
    LangGraph   a StateGraph of two nodes (model, tool) with SqliteSaver, its SQLite
                checkpointer: a checkpoint after each node. Two shapes of state: the
                conversation appended by a reducer, as an agent's MessagesState keeps it
                (plain dicts, not LangChain message objects: the cheapest way to hold them),
                up to 1,000 turns, since every checkpoint stores it again; and only the last
                exchange, which a scripted loop that needs no history could keep.

For each N (--turns, default 1,000 and 5,000), in a fresh database each:

    per turn        building the run, N turns in one go, divided by N (ms).
    storage         the database file(s) after the run, less the empty database (MB).
    resume + 1      a new journal / checkpointer and a new graph on the same database, as a
                    restarted process would have: go on from where the run stands, one more
                    turn (s). Minutes, full replay: reads the run's events and replays the
                    loop over them (runtime/session.py), as before loop snapshots; Minutes,
                    snapshots: the loop keeps a snapshot every --every turns (a file beside
                    the database, runtime/snapshots.py, as the command line keeps them;
                    counted in its storage; "in a table": in the journal's database, as the
                    workers keep them), and the resume reads the events before the loop and
                    after the latest snapshot and replays only those. LangGraph loads its
                    latest checkpoint.

    .venv/bin/pip install langgraph langgraph-checkpoint-sqlite   # the bench extra's
    PYTHONPATH=. .venv/bin/python bench/peer_langgraph.py
"""

from __future__ import annotations

import argparse
import contextlib
import operator
import shutil
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Annotated, Any, TypedDict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.production_env import setup  # noqa: E402

ARGS = {"path": "src/textparse/parser.py", "note": "x" * 150}  # ~200 bytes as JSON
RESULT = "r" * 300
TOKENS = 50


# --- LangGraph ------------------------------------------------------------------------------


class State(TypedDict):
    """The conversation in the state, as a LangGraph agent keeps it (MessagesState)."""

    messages: Annotated[list[dict[str, Any]], operator.add]
    turns: int
    limit: int


class LastState(TypedDict):
    """Only the latest exchange: what a scripted loop that needs no history could keep."""

    messages: list[dict[str, Any]]
    turns: int
    limit: int


# With the whole conversation in the state, every checkpoint stores it again: storage grows
# with the square of the turns (613 MB at 1,000 turns here), so that shape runs up to this.
HISTORY_MAX_TURNS = 1_000


def model(state: Any) -> dict[str, Any]:  # Any: one pair of nodes for both shapes
    answer = {
        "role": "assistant",
        "tool_calls": [{"id": f"c{state['turns']}", "name": "read_file", "args": ARGS}],
        "usage": {"total_tokens": TOKENS},
    }
    return {"messages": [answer]}


def tool(state: Any) -> dict[str, Any]:
    call = state["messages"][-1]["tool_calls"][0]
    reply = {"role": "tool", "tool_call_id": call["id"], "content": RESULT}
    return {"messages": [reply], "turns": state["turns"] + 1}


def graph(path: Path, history: bool = True) -> Any:
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph

    builder = StateGraph(State if history else LastState)
    builder.add_node("model", model)
    builder.add_node("tool", tool)
    builder.add_edge(START, "model")
    builder.add_edge("model", "tool")
    builder.add_conditional_edges(
        "tool", lambda s: END if s["turns"] >= s["limit"] else "model", ["model", END]
    )
    saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    return builder.compile(checkpointer=saver)


def langgraph_figures(turns: int, tmp: Path, history: bool = True) -> dict[str, float]:
    path = tmp / f"langgraph-{turns}-{history}.sqlite3"
    config = {"configurable": {"thread_id": "run"}, "recursion_limit": 4 * turns + 10}
    g = graph(path, history)
    g.invoke({"messages": [], "turns": 0, "limit": 0}, config)  # the empty database
    empty = size_of(path)
    started = time.perf_counter()
    g.invoke({"limit": turns}, config)
    per_turn = (time.perf_counter() - started) / turns * 1000
    stored = size_of(path) - empty
    started = time.perf_counter()
    again = graph(path, history)  # a restarted process: a new checkpointer on the same file
    state = again.invoke({"limit": turns + 1}, config)
    resume = time.perf_counter() - started
    assert state["turns"] == turns + 1
    return {"per turn (ms)": per_turn, "storage (MB)": stored / 1e6, "resume + 1 (s)": resume}


# --- Minutes --------------------------------------------------------------------------------


def minutes_figures(
    turns: int, tmp: Path, every: int | None = None, store: str = "files"
) -> dict[str, float]:
    """With `every`, the loop keeps a snapshot every that many turns, and the resume starts
    from the latest; without, the resume reads every event and replays the loop over them
    (before snapshots). `store`: "files", a directory beside the database (runtime/snapshots.py,
    as the command line keeps them), or "table", the journal's database (journal_store/
    snapshots.py, as the workers keep them)."""
    from django.db import connections

    from journal_store.journal import DjangoJournal
    from journal_store.snapshots import DatabaseSnapshots
    from runtime import loop
    from runtime.budget import Budget
    from runtime.model import ScriptedClient, call
    from runtime.session import Session
    from runtime.snapshots import FileSnapshots, Snapshots
    from runtime.stops import StepComplete
    from runtime.tools import Tool, Toolbox, schema

    path = tmp / f"minutes-{turns}-{every}.sqlite3"
    kept = tmp / f"snapshots-{turns}-{every}"
    snapshots: Snapshots | None = None
    if every is not None:
        snapshots = FileSnapshots(kept) if store == "files" else DatabaseSnapshots()
    cadence = {"snapshots": snapshots, "snapshot_every": every or 1}
    use_database(path)
    empty = size_of(path)
    tools = [
        Tool(
            "read_file",
            "Read a file.",
            schema({"path": {"type": "string"}, "note": {"type": "string"}}),
            lambda path, note: RESULT,
        )
    ]
    script = [call("read_file", TOKENS, **ARGS) for _ in range(turns + (every or 1))]
    script.append(call("done", 10))

    def agent() -> loop.Agent:
        client = ScriptedClient(script, "coder")
        return loop.Agent(
            "coder", client, Toolbox(tools), "You read.", max_turns=turns + 2 * (every or 1) + 5
        )

    def fly(session: Session) -> None:
        with contextlib.suppress(StepComplete):  # the session's turns are used up
            loop.run(agent(), "Read the file.", session, Budget(10**9))

    started = time.perf_counter()
    fly(Session(DjangoJournal(), "run", steps=turns, **cadence))
    per_turn = (time.perf_counter() - started) / turns * 1000
    connections.close_all()
    stored = size_of(path) - empty + sum(p.stat().st_size for p in kept.glob("*"))
    started = time.perf_counter()
    # A new journal and session, as a restarted process has: with snapshots it reads the
    # events before the loop and after the latest snapshot; without, every event.
    resumed = Session(DjangoJournal(), "run", steps=1, **cadence)
    fly(resumed)
    resume = time.perf_counter() - started
    assert resumed.counts["ModelCalled"] == turns + 1
    assert (resumed.skipped > 0) == (every is not None)
    figures = {"per turn (ms)": per_turn, "storage (MB)": stored / 1e6, "resume + 1 (s)": resume}
    if every is not None and every > 2:
        # Above, the latest snapshot stands at the last turn. The worst place to resume is
        # every - 1 turns after one: read and replay those.
        fly(Session(DjangoJournal(), "run", steps=every - 2, **cadence))
        connections.close_all()
        started = time.perf_counter()
        worst = Session(DjangoJournal(), "run", steps=1, **cadence)
        fly(worst)
        figures["worst resume + 1 (s)"] = time.perf_counter() - started
        assert worst.counts["ModelCalled"] == turns + every
    return figures


def use_database(path: Path) -> None:
    """Point the default connection at a fresh, migrated SQLite file."""
    from django.core.management import call_command
    from django.db import connections

    connections.close_all()
    connections.settings["default"]["NAME"] = str(path)
    connections["default"].settings_dict["NAME"] = str(path)
    call_command("migrate", verbosity=0)
    connections.close_all()


def size_of(path: Path) -> int:
    """The database's bytes, with what its write-ahead log still holds."""
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", default="1000,5000", help="turns per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs per figure (medians)")
    parser.add_argument(
        "--every",
        type=int,
        default=None,
        help="Minutes keeps a loop snapshot every this many turns (default: as shipped)",
    )
    args = parser.parse_args()
    if args.every is None:
        from runtime.snapshots import EVERY

        args.every = EVERY
    # As a deployed worker runs: MINUTES_DEBUG=0 (no query log). Each run gets a database
    # of its own (use_database); the one set up here is not used.
    work = setup("peer", sqlite="unused.sqlite3").work
    print(f"medians of {args.repeats}; each run in a fresh SQLite database")
    header = f"{'':<26}{'turns':>7}{'per turn (ms)':>15}{'storage (MB)':>14}{'resume + 1 (s)':>16}"
    print(header)
    for turns in [int(t) for t in args.turns.split(",")]:
        contenders: dict[str, Any] = {
            "Minutes, full replay": minutes_figures,
            f"Minutes, snapshots /{args.every}": lambda n, tmp: minutes_figures(n, tmp, args.every),
            "  the same, in a table": lambda n, tmp: minutes_figures(n, tmp, args.every, "table"),
            "LangGraph, last exchange": lambda n, tmp: langgraph_figures(n, tmp, history=False),
        }
        if turns <= HISTORY_MAX_TURNS:
            contenders["LangGraph, conversation"] = langgraph_figures
        samples: dict[str, dict[str, list[float]]] = {name: {} for name in contenders}
        for i in range(args.repeats):
            tmp = work / f"{turns}-{i}"
            tmp.mkdir()
            for name, measure in contenders.items():
                for key, value in measure(turns, tmp).items():
                    samples[name].setdefault(key, []).append(value)
                for used in tmp.iterdir():  # a few hundred MB each: keep the disk free
                    if used.is_dir():
                        shutil.rmtree(used)
                    else:
                        used.unlink()
        for name, figures in samples.items():
            cells = [statistics.median(figures[k]) for k in figures]
            print(f"{name:<26}{turns:>7,}{cells[0]:>15.2f}{cells[1]:>14.1f}{cells[2]:>16.3f}")
            if len(cells) > 3:
                print(
                    f"{'':<26}{'':>7}{'':>15}{'':>14}{cells[3]:>16.3f}  {args.every - 1} turns "
                    "after its latest snapshot"
                )
        if turns > HISTORY_MAX_TURNS:
            print(f"{'LangGraph, conversation':<26}{turns:>7,}  not run: storage grows with turns²")


if __name__ == "__main__":
    main()
