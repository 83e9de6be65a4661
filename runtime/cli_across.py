"""The command line's commands across runs: diff (compare two runs), fork (a new run from an
event of another), zi (the zero-intelligence 2 x 2). `runtime.cli` registers them."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from runtime import (
    compare,
    flight,
    fork,
    fork_checks,
    fork_workspace,
    keys,
    plugins,
    streams,
    zero,
)
from runtime.cli import (
    EXIT_DIFFERS,
    EXIT_INTERRUPTED,
    EXIT_NOT_WRITTEN,
    EXIT_OK,
    NO_SANDBOX,
    endpoint_down,
    leased,
    open_journal,
    per_agent,
    report,
    run_of,
    services,
)
from runtime.cli_args import folder_arg, run_id_arg, setting
from runtime.cli_lease import LeaseHeld, LeaseTaken
from runtime.cli_stop import StopSignal, operator
from runtime.flat import NUMBER_TOO_LONG
from runtime.journal import DuplicateEventId, WrongExpectedVersion
from runtime.jsonl import JsonlJournal
from runtime.model import EndpointDown
from runtime.team import Services


def cmd_diff(args: argparse.Namespace) -> int:
    sides = []
    for path, run, option in ((args.a, args.run_a, "--run-a"), (args.b, args.run_b, "--run-b")):
        journal = open_journal(Path(path))
        run_id = run_of(journal, run, option)
        sides.append((f"{path} ({run_id})", flight.figured_records(journal, run_id)))
    (a_name, a), (b_name, b) = sides
    result = compare.compare(a, b, a_name, b_name)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2, default=str))
    else:
        print(compare.text(result))
    return EXIT_OK if result.identical else EXIT_DIFFERS


# The options a fork's changes are given by, as its refusals name them.
FLAGS = {"message": "--say", "tool_result": "--tool-result"}


def cmd_fork(args: argparse.Namespace) -> int:
    path = Path(args.journal)
    journal = open_journal(path)
    parent = run_of(journal, args.run)
    if args.key and args.run_id:
        raise flight.FlightError("--key names the fork's id: give --key or --run-id, not both")
    if args.key and (why := keys.refusal(args.key)):
        raise flight.FlightError(f"--key: {why}")
    if args.key:
        child = fork.keyed_id(args.key, operator(), parent)
    else:
        child = args.run_id or flight.new_run_id()
    if journal.version(f"run-{child}") and not args.key:
        raise flight.FlightError(f"--run-id: the journal already holds a run {child}")
    result = None
    if args.tool_result is not None:
        try:
            result = json.loads(args.tool_result)
        except json.JSONDecodeError as exc:
            raise flight.FlightError(f"--tool-result is not JSON: {exc}") from None
        except ValueError:
            raise flight.FlightError(
                f"--tool-result is not JSON we can read: {NUMBER_TOO_LONG}"
            ) from None
        except RecursionError:
            raise flight.FlightError("--tool-result is nested too deeply to read") from None
    message = None
    if args.say:
        agent, sep, text = args.say.partition("=")
        if not sep or not agent.strip() or not text:
            raise flight.FlightError(f"--say wants AGENT=TEXT, got {args.say!r}")
        message = (agent.strip(), text)
    changes = fork.Changes(
        models=per_agent(args.model_for),
        message=message,
        tool_result=result,
        replace_result=args.tool_result is not None,
        max_turns=args.max_turns,
        allowance=args.allowance,
    )
    try:
        # Before anything is read or written: the page and the API refuse them as they come.
        fork_checks.asked(changes)
    except fork.ForkRefused as exc:
        raise flight.FlightError(f"{FLAGS[exc.field]}: {exc.why}") from None
    root = Path(args.workspaces) if args.workspaces else path.resolve().parent
    # The host the fork goes on live on, asked before it is written whether its team can
    # (fork.ready); --no-sandbox is warned of where the fork flies now.
    here = services(args, flies=args.go)
    # Run again with its key: the fork it made is answered, its journal and workspace as
    # they are (nothing is planned, restored or written again).
    made = made_before(journal, child, parent, args.at, changes) if args.key else None
    if made is None:
        made = make(journal, path, root, parent, child, args.at, changes, args.key, here)
    number, again = made
    said = f"forked {parent} at position {args.at} (its event {number}) as {child}"
    print(f"{said} already, with this key: nothing written" if again else said)
    if not args.go:
        print(f"drive it with: python -m runtime resume {path} --run {child}")
        return EXIT_OK
    stop = StopSignal(path, child)
    previous = stop.install()
    try:
        with leased(journal, child) as held:  # as `resume` drives it: leased
            outcome = flight.resume(
                held.journal, child, root, stop=stop, by=operator(), services=here
            )
            held.outcome = outcome.status
    finally:
        signal.signal(signal.SIGINT, previous)
    return report(outcome, journal, path, args.json)


def make(
    journal: JsonlJournal,
    path: Path,
    root: Path,
    parent: str,
    child: str,
    at: int,
    changes: fork.Changes,
    key: str,
    here: Services,
) -> tuple[int, bool]:
    """Plan, check and write the fork (its workspace restored beside its own, moved there once
    its events are written): its event number at the parent, and False (made now). With a
    key, the same fork written first by another command at once is answered instead."""
    records = fork.records_of(journal, parent)
    planned = fork.plan(records, parent, child, at, changes, operator())
    fork.verify(journal, planned)
    # Its past replays; whether it can go on from there, on this file and host, is its team's
    # to say (a desk run exported from a store cannot: its order's opening is not in it).
    fork.ready(journal, planned, root, here)
    staged = fork_workspace.stage_workspace(planned, root)
    try:
        fork.write(journal, planned)  # all its streams or none (fork.write)
    except BaseException as exc:
        # Nothing of the fork was written: the workspace restored for it belongs to no run.
        removed = fork_workspace.discard_workspace(staged)
        if (
            key
            and isinstance(exc, WrongExpectedVersion | DuplicateEventId)
            and (first := made_before(journal, child, parent, at, changes)) is not None
        ):
            return first
        # Not OutOfRange: bad data, which trying again does not mend.
        if isinstance(exc, OSError | WrongExpectedVersion | DuplicateEventId):
            raise fork.ForkNotWritten(parent, str(path), exc, removed) from None
        raise
    fork_workspace.place_workspace(planned, root, staged)
    return planned.forked.number, False


def made_before(
    journal: JsonlJournal, child: str, parent: str, at: int, changes: fork.Changes
) -> tuple[int, bool] | None:
    """The fork `child` (a key's id) when the journal holds it: its event number at the
    parent, and True (made before); FlightError naming what differs when it was asked
    otherwise, or saying so when it is no fork this person made; None when the journal holds
    no run `child`."""
    records = journal.read(streams.journal(child))
    if not records:
        return None
    forked = fork.own_forked(records, child)
    if forked is None or forked.by != operator():
        # The id is a plain hash of the key, the person and the parent (runtime/keys.py): a
        # run there that this person did not fork was put there by whoever wrote the file.
        raise flight.FlightError(
            f"--key: this key names run {child}, which {operator()} did not fork: choose "
            "another key (nothing was written)"
        )
    differ = fork.differences(forked, parent, at, changes)
    if differ:
        raise flight.FlightError(
            f"--key: this key made run {child} with other settings ({', '.join(differ)}): run "
            "the same fork again to be answered that run, or use another key for a new one"
        )
    return forked.number, True


def cmd_zi(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    settings = {"allowance": args.allowance, "max_turns": args.max_turns}
    paths = {cell: root / f"zi-{cell[0]}-{cell[1]}.jsonl" for cell in zero.cells_of(args.model)}
    # Every cell checked and planned before the folder is made or any cell flies: a refused
    # scenario or backend left an empty folder behind, or a cell flown before the next was
    # refused.
    here = services(args)
    planned = [
        zero.plan_cell(args.team, args.scenario, coder, reviewer, path, here, **settings)
        for (coder, reviewer), path in paths.items()
    ]
    root.mkdir(parents=True, exist_ok=True)
    held = claim_folder(root, [each.path for each in planned])
    try:
        return fly_cells(args, root, planned, here)
    finally:
        os.close(held)


def fly_cells(
    args: argparse.Namespace, root: Path, planned: list[zero.PlannedCell], here: Services
) -> int:
    """Fly the 2x2's cells one after another and print what held in each."""
    cells = []
    for n, each in enumerate(planned):
        # Ctrl-C (or the cell journal's .stop file) stops the cell at its next turn boundary,
        # as `fly` stops a run, and the 2x2 with it: it went on to the next cell, or, pressed
        # twice, left a traceback.
        stop = StopSignal(each.path, each.run_id)
        previous = stop.install()
        try:
            flown, ended = fly_leased(each, root, here, stop)
        except (EndpointDown, LeaseHeld, LeaseTaken) as exc:
            # The cell rests at the call nobody answered, or was not flown for a lease
            # somebody else holds, or stopped where its lease was taken from it; the cells
            # after it never flew. Said so, with how to go on: the same command again
            # refuses the folder.
            if isinstance(exc, EndpointDown):
                code = endpoint_down(exc, each.path, "the cell")
            else:
                print(f"error: {exc}", file=sys.stderr)
                code = EXIT_NOT_WRITTEN if isinstance(exc, LeaseHeld) else EXIT_INTERRUPTED
            say_not_flown(planned[n + 1 :])
            return code
        finally:
            signal.signal(signal.SIGINT, previous)
        cells.append(flown)
        if ended == "interrupted":
            print(
                f"the cell {each.path} stopped at a turn boundary, as asked; go on with: "
                f"python -m runtime resume {each.path} --run {each.run_id}",
                file=sys.stderr,
            )
            say_not_flown(planned[n + 1 :])
            return EXIT_INTERRUPTED
    if args.json:
        print(json.dumps(cells, indent=2))
    else:
        print(zero.table(cells))
        print(f"\njournals: {root}/zi-*.jsonl")
    return EXIT_OK


def claim_folder(root: Path, paths: list[Path]) -> int:
    """Hold `root` for this 2x2 (a lock on the folder, let go when the process ends however it
    ends) and check again that no cell's journal is there: two 2x2s given the same --dir at
    once both found it free (plan_cell's check) and flew their cells into the same journals.
    The folder's descriptor, for the caller to close; FlightError when another holds it."""
    held = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(held)
        raise flight.FlightError(f"another zi is flying into {root}: give another --dir") from None
    if taken := next((p for p in paths if p.exists()), None):
        os.close(held)
        raise flight.FlightError(f"{taken} exists: give another --dir")
    return held


def say_not_flown(rest: list[zero.PlannedCell]) -> None:
    """Which cells a 2x2 that stopped early never flew, and how to fly the whole of it."""
    if rest:
        print(
            f"not flown: {', '.join(str(p.path) for p in rest)}; run zi again with another "
            "--dir for the whole 2x2",
            file=sys.stderr,
        )


def fly_leased(
    planned: zero.PlannedCell, root: Path, here: Services, stop: StopSignal | None = None
) -> tuple[dict[str, Any], str]:
    """Fly a cell under its run's lease, as `fly` flies a run (runtime/cli_lease.py): while
    it flies, a `resume` of its journal (or a worker) is refused; a cell whose lease somebody
    else holds is refused (LeaseHeld) before anything of it is written. The cell as read, and
    how its run ended (`interrupted` when `stop` stopped it)."""
    journal = open_journal(planned.path, must_exist=False)
    with leased(journal, planned.run_id, fresh=True) as held:
        outcome = flight.fly(
            held.journal, planned.config, planned.run_id, root, stop=stop, services=here
        )
        held.outcome = outcome.status
    return zero.read_planned(journal, planned), outcome.status


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the commands on the command line's subparsers."""
    diff = sub.add_parser(
        "diff",
        help="compare two runs: outcome, bill, calls, findings, and where they first part "
        "(exit 0 when they took the same steps, 1 when not)",
    )
    diff.add_argument("a", help="the first run's journal")
    diff.add_argument("b", help="the second run's journal (may be the same file)")
    diff.add_argument("--run-a", help="which run of A, when its journal holds several")
    diff.add_argument("--run-b", help="which run of B, when its journal holds several")
    diff.add_argument("--json", action="store_true", help="print the comparison as JSON")
    diff.set_defaults(func=cmd_diff)

    forking = sub.add_parser(
        "fork",
        help="start a new run from a run's journal up to one of its events, with changes; "
        "its past is read back from the record, never done again",
    )
    forking.add_argument("journal")
    forking.add_argument("--at", type=int, required=True, help="the event's position")
    forking.add_argument("--run", help="which run, when the journal holds several")
    forking.add_argument("--run-id", type=run_id_arg, help="the fork's id (default: a new r-… id)")
    forking.add_argument(
        "--key",
        default="",
        help="an idempotency key: the command run again with it (and the same fork) makes no "
        "second fork, it prints the fork the first made (with --go, drives it on)",
    )
    forking.add_argument(
        "--model-for",
        action="append",
        default=[],
        metavar="AGENT=BACKEND",
        help="another backend for an agent from the fork on; endpoint:NAME for another "
        "endpoint model (repeatable)",
    )
    forking.add_argument("--say", metavar="AGENT=TEXT", help="a message for an agent's next turn")
    forking.add_argument(
        "--tool-result", metavar="JSON", help="replace the tool result at --at (a ToolReturned)"
    )
    forking.add_argument("--max-turns", type=setting("max_turns"), help="turn cap per agent")
    forking.add_argument(
        "--allowance", type=setting("allowance"), help="token allowance for the whole run"
    )
    forking.add_argument(
        "--workspaces", type=folder_arg, help="where run workspaces are (default: beside it)"
    )
    forking.add_argument("--go", action="store_true", help="drive the fork now, in-process")
    forking.add_argument("--json", action="store_true")
    forking.add_argument("--no-sandbox", action="store_true", help=NO_SANDBOX)
    forking.set_defaults(func=cmd_fork, model=None)

    zi = sub.add_parser(
        "zi",
        help="the zero-intelligence test: fly the 2x2 (a model or ZI coder, a model or rule "
        "reviewer, the ZI tester) and print what held in every cell",
        description="Fly the team four times: its coder on --model or ZI (the same `done` "
        "whatever it is told), its reviewer on --model or the rule (accept exactly passing "
        "test evidence attached by the harness), its tester ZI, the orchestrator's plan "
        "scripted. The table names each cell's backends and the harness's verdict.",
    )
    zi.add_argument(
        "--dir", required=True, type=folder_arg, help="where the four journals and workspaces go"
    )
    zi.add_argument(
        "--team",
        required=True,
        choices=sorted(
            n for n, t in plugins.teams().items() if set(t.roles.values()) >= {"writes", "reviews"}
        ),
        help="a team with a writer and a reviewer",
    )
    zi.add_argument("--scenario", help="the team's scenario (default: its first)")
    zi.add_argument(
        "--model",
        choices=zero.MODELS,
        default="scripted",
        help="what flies the cells' model side, coder and reviewer: the scenario's scripts "
        "(default), the OpenAI-compatible endpoint from MINUTES_MODEL_*, or the local model "
        "server at MINUTES_LOCAL_MODEL_URL (a 135M model shows the mechanics only)",
    )
    zi.add_argument("--allowance", type=setting("allowance"), help="token allowance per cell's run")
    zi.add_argument("--max-turns", type=setting("max_turns"), help="turn cap per agent")
    zi.add_argument("--json", action="store_true")
    zi.add_argument("--no-sandbox", action="store_true", help=NO_SANDBOX)
    zi.set_defaults(func=cmd_zi)
