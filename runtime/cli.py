"""`python -m runtime`: a journal toolbox on the command line, no database needed.

    fly --team T [--scenario S] --journal PATH  fly a team in-process, journalling to PATH
    resume PATH       continue an interrupted or crashed run
    replay PATH       re-run from the journal alone: "identical", or the first difference
    baseline PATH     fly a team run's single-agent baseline into PATH, print the two side by side
    views PATH        bill, threads, audit, resume point, findings and metrics as JSON
    diagnose PATH     findings: failure signatures, each citing the events that show it
    interrupt PATH    ask a running flight to stop at its next turn boundary
    diff A B          two runs side by side (outcome, bill, calls, findings) and where they part
    fork PATH --at N  a new run from a run's event on, its past read back from the record
    zi --dir DIR --team T  the zero-intelligence test: model or ZI coder, model or rule reviewer
    otlp PATH [--protobuf] [-o FILE] [--project P] [--no-content] [--content-chars N]
                      the run as an OpenTelemetry trace: OTLP/JSON, or OTLP/protobuf

Exit status: 0 done (or identical), 1 a replay differs, 2 bad input, 3 the run ended with
another verdict (failed, halted, out_of_turns, inconclusive, escalated), 4 interrupted (or
its lease lost mid-run), 5 a fork the journal did not take, or a run whose lease somebody
else holds (nothing of it written: try again).

The teams are the installed ones (`runtime.plugins`); a team's own flags (`--order`,
`--bidding`, ...) are the options it declares.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runtime import flight, fork, plugins, status, terminal, views, written
from runtime.cli_args import kind_of
from runtime.cli_lease import Driving, LeaseHeld, LeaseTaken, driving
from runtime.cli_stop import QuitAtOnce, operator, stop_path
from runtime.diagnose import diagnose
from runtime.events import RunInterrupted, TeamFinished
from runtime.faults import Faults
from runtime.journal import JournalError
from runtime.jsonl import JournalCorrupt, JsonlJournal
from runtime.model import EndpointDown, ModelError
from runtime.sandbox import Sandbox
from runtime.stops import ReplayDivergence
from runtime.team import Services

EXIT_OK, EXIT_DIFFERS, EXIT_BAD_INPUT, EXIT_VERDICT, EXIT_INTERRUPTED = 0, 1, 2, 3, 4
EXIT_CTRL_C = 130  # a command stopped by Ctrl-C, as shells count it (128 + SIGINT)
EXIT_NOT_WRITTEN = 5  # not the caller's input that was wrong: the same command may go through


def exit_status(state: str) -> int:
    """How a run that stopped in `state` (runtime/status.py) exits, here and in manage.py's
    start_run --wait: 0 done, 4 stopped short of a verdict, for a person to resume
    (interrupted) or retry (dead-lettered, on the workers), 3 another verdict, compensated
    among them (done, but a saga undid its money steps: no verified success, docs/metrics.md)."""
    if state == "done":
        return EXIT_OK
    return EXIT_INTERRUPTED if state in (status.INTERRUPTED, status.DEAD_LETTERED) else EXIT_VERDICT


def open_journal(path: Path, must_exist: bool = True) -> JsonlJournal:
    if path.exists() and not path.is_file():
        # A folder (or a pipe, which reading would wait on for ever) was "no journal at".
        raise flight.FlightError(f"{path} is not a journal file: {kind_of(path)}")
    if must_exist and not path.is_file():
        raise flight.FlightError(f"no journal at {path}")
    journal = JsonlJournal(path)
    if journal.torn is not None:
        print(f"warning: {journal.torn.describe(path)}", file=sys.stderr)
    return journal


def run_of(journal: JsonlJournal, given: str | None, option: str = "--run") -> str:
    return flight.find_run(journal, journal.streams(), given, option)


def report(
    outcome: flight.FlightOutcome,
    journal: JsonlJournal,
    path: Path,
    as_json: bool,
    extra: dict[str, Any] | None = None,
) -> int:
    records = flight.figured_records(journal, outcome.run_id)
    the_bill = views.bill(records)
    # What went wrong, said where the run's outcome is: a run that ended inconclusive said
    # only "the coder stopped: inconclusive" until one asked `diagnose`.
    found = diagnose(records)
    # "done" whose money steps a saga undid is "compensated" (no verified success), as the
    # pages list it: said so, and exits 3, where it read and exited as done.
    state = views.status(records) if outcome.status == "done" else outcome.status
    if as_json:
        print(
            json.dumps(
                {
                    "run_id": outcome.run_id,
                    "status": state,
                    "reason": outcome.reason,
                    "journal": str(path),
                    "bill": the_bill,
                    "findings": found,
                    **(extra or {}),
                },
                indent=2,
            )
        )
    else:
        print(f"run {outcome.run_id}: {state} ({outcome.reason})")
        print(f"journal: {path}")
        print(format_bill(the_bill))
        print(format_findings(found))
    return exit_status(state)


def format_bill(b: dict[str, Any]) -> str:
    lines = ["bill:", f"  {'agent':<14}{'tokens':>8}{'calls':>7}{'share':>8}"]
    for name, row in b["agents"].items():
        # Calls whose usage Minutes estimated: not the vendor's figures (runtime/prices.py).
        guessed = f"  ({row['estimated']} estimated)" if row.get("estimated") else ""
        lines.append(
            f"  {name:<14}{row['tokens']:>8}{row['calls']:>7}{row['share']:>8.1%}{guessed}"
        )
    total = b["total"]
    lines.append(f"  {'total':<14}{total['tokens']:>8}{total['calls']:>7}")
    if b["allowance"] is not None:
        lines.append(
            f"  allowance {b['allowance']}, spent {b['spent']}, remaining {b['remaining']}"
        )
    return "\n".join(lines)


def format_findings(found: list[dict[str, Any]]) -> str:
    if not found:
        return "findings: none"
    lines = ["findings:"]
    for f in found:
        cited = ", ".join(str(p) for p in f["positions"])
        events = "event" if len(f["positions"]) == 1 else "events"
        lines.append(f"  {f['kind'].replace('_', ' ')}: {f['summary']} ({events} {cited})")
    return "\n".join(lines)


# --- commands ---------------------------------------------------------------------------------


def per_agent(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        agent, sep, backend = pair.partition("=")
        if not sep or not agent or not backend:
            raise flight.FlightError(f"--model-for wants AGENT=BACKEND, got {pair!r}")
        if out.get(agent, backend) != backend:
            # The last one won, so a run flew on a backend the line also said it would not.
            raise flight.FlightError(
                f"--model-for names {agent} twice ({out[agent]}, then {backend}): say each "
                "agent once"
            )
        out[agent] = backend
    return out


def services(args: argparse.Namespace, flies: bool = True) -> Services:
    """The command line's world: its environment names the model endpoints (the command line
    is a host, and reads its environment here); --no-sandbox is the operator's explicit
    opt-out, warned of when a run `flies` now (not for a fork only written)."""
    models = dict(os.environ)
    if not args.no_sandbox:
        return Services(models=models)
    if not flies:
        return Services(sandbox=Sandbox(required=False), models=models)
    print(
        "warning: --no-sandbox: agent-written code runs WITHOUT the sandbox, with your rights, "
        "files and network (a run started in the sandbox stays in it)",
        file=sys.stderr,
    )
    return Services(sandbox=Sandbox(required=False), models=models)


def faults() -> Faults:
    """The crash-test seams this command was started with (MINUTES_FAULT, MINUTES_EXEC_LOG):
    the command line is a host, and reads its environment here, once."""
    return Faults.from_env(os.environ)


def leased(
    journal: JsonlJournal, run_id: str, fresh: bool = False
) -> contextlib.AbstractContextManager[Driving]:
    """The run's lease while this command drives it (runtime/cli_lease.py), as long as the
    workers' own (MINUTES_STEP_LEASE_SECONDS, read here: the command line is a host)."""
    return driving(journal, run_id, os.environ, fresh)


def cmd_replay(args: argparse.Namespace) -> int:
    journal = open_journal(Path(args.journal))
    result = flight.replay(journal, run_of(journal, args.run))
    if result.identical:
        note = (
            ""
            if result.complete
            else f" (the journal ends after {result.events} events, before the run finished)"
        )
        note += result.specialists()
        if result.ended_by:
            note += f"; then a person ended it ({result.ended_by})"
        print("identical" + note)
        return EXIT_OK
    print(f"differs {result.difference}")
    return EXIT_DIFFERS


def cmd_views(args: argparse.Namespace) -> int:
    journal = open_journal(Path(args.journal))
    records = flight.figured_records(journal, run_of(journal, args.run))
    print(json.dumps(views.all_views(records), indent=2, default=str))
    return EXIT_OK


def cmd_diagnose(args: argparse.Namespace) -> int:
    journal = open_journal(Path(args.journal))
    records = flight.figured_records(journal, run_of(journal, args.run))
    print(json.dumps(diagnose(records), indent=2))
    return EXIT_OK


def none_running(journal: JsonlJournal) -> str:
    """How each run of the journal stands ("r-1 done, r-2 interrupted"), when none is flying
    or could be: each finished or interrupted. "" when one may be, or none is there yet."""
    runs = [s.removeprefix("run-") for s in journal.streams() if s.startswith("run-")]
    stood = []
    for run_id in runs:
        records = journal.read(f"run-{run_id}")
        last = records[-1].event if records else None
        if isinstance(last, TeamFinished):
            stood.append(f"{run_id} {last.status}")
        elif isinstance(last, RunInterrupted):
            stood.append(f"{run_id} interrupted: `resume` goes on")
        else:
            return ""
    return flight.some(stood)


def cmd_interrupt(args: argparse.Namespace) -> int:
    path = Path(args.journal)
    if path.exists() and not path.is_file():  # a folder was asked to stop, and said yes
        raise flight.FlightError(f"{path} is not a journal file: {kind_of(path)}")
    reason = args.reason.strip()
    if why := written.reason_refusal(reason):  # journalled as the stop's: as the pages refuse it
        raise flight.FlightError(f"--reason: {why}")
    if path.is_file() and (stood := none_running(open_journal(path))):
        # Asked of a journal whose runs are over, the stop stayed on file and stopped the next
        # flight into that journal at its first turn boundary; of an interrupted run, `resume`
        # took the stop file away and went on to the end, as if it had not been asked.
        raise flight.FlightError(
            f"the run journalled at {path} is not running ({stood}): there is nothing to stop"
        )
    stop = stop_path(path)
    if stop.exists():
        # A second stop wrote over the first one's reason, and said it had asked: as
        # `manage.py interrupt_run` refuses a run asked to stop already.
        raise flight.FlightError(
            f"the run journalled at {path} was asked to stop already ({stop} is there; "
            "remove it to take that stop back)"
        )
    stop.write_text(json.dumps({"by": operator(), "reason": reason}))
    if path.is_file():
        print(f"asked the run journalled at {path} to stop at its next turn boundary")
    else:
        # A stop may come before its flight (a test, a script that starts it next), but a
        # mistyped path should not read as a run asked to stop.
        print(
            f"no journal at {path} yet: a flight started with --journal {path} stops at its "
            f"first turn boundary (remove {stop} to take the stop back)"
        )
    return EXIT_OK


NO_SANDBOX = (
    "run agent code without bubblewrap (where it is missing); it then has your rights, files "
    "and network"
)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m runtime",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True)
    from runtime import cli_across as across  # they import this module's helpers
    from runtime import cli_fly, cli_otlp

    cli_fly.add(sub)
    for name, func, text in (
        ("replay", cmd_replay, "replay a run from its journal alone"),
        (
            "views",
            cmd_views,
            "print bill, threads, audit, resume point, findings and coordination metrics as JSON",
        ),
        ("diagnose", cmd_diagnose, "print the findings: failure signatures and their events"),
    ):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("journal")
        cmd.add_argument("--run", help="which run, when the journal holds several")
        cmd.set_defaults(func=func)

    across.add(sub)
    cli_otlp.add(sub)

    stop = sub.add_parser("interrupt", help="stop a running flight at its next turn boundary")
    stop.add_argument("journal")
    stop.add_argument("--reason", default="")
    stop.set_defaults(func=cmd_interrupt)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; everything it prints is plain text (runtime/terminal.py): a reason,
    a finding or an error may quote a model, a tool's name or a journal from elsewhere."""
    with terminal.plain_streams():
        return run_command(argv)


def endpoint_down(exc: EndpointDown, where: object, what: str = "the run") -> int:
    """Say that the model endpoint did not answer and, where `what`'s journal is known, how to
    go on: nothing of the run failed, its journal stops at the call that went unanswered."""
    print(f"error: the model endpoint did not answer: {exc}", file=sys.stderr)
    if where:
        print(
            f"{what} rests at that call in {where}: `python -m runtime resume {where}` "
            "asks again from there once the endpoint answers",
            file=sys.stderr,
        )
    return EXIT_INTERRUPTED


def run_command(argv: Sequence[str] | None) -> int:
    try:
        args = parser().parse_args(argv)
    except (flight.FlightError, plugins.PluginError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        code: int = args.func(args)
        return code
    except (
        flight.FlightError,
        fork.ForkRefused,
        JournalCorrupt,
        JournalError,
        ReplayDivergence,
        ModelError,
    ) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except QuitAtOnce as exc:
        print(exc, file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        # Ctrl-C where no flight has taken it over (a report being printed, a replay, a
        # baseline's flight): the command stops in a line, what it journalled stays.
        where = getattr(args, "journal", None)
        kept = f"; {where} keeps every event written before it" if where else ""
        print(f"interrupted (Ctrl-C){kept}", file=sys.stderr)
        return EXIT_CTRL_C
    except (fork.ForkNotWritten, LeaseHeld) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_NOT_WRITTEN
    except LeaseTaken as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except EndpointDown as exc:
        return endpoint_down(exc, getattr(args, "journal", None))
    except BrokenPipeError:
        # The reader went away (`| head`): not an error of ours. Point stdout at nothing so
        # the interpreter's final flush does not complain a second time.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:
        # A path that cannot be used (a journal that is a directory, an output in a folder
        # that is not there, no permission): say which and why, not a traceback. An OSError
        # that names no path (a network failure nothing wrapped, a full disk) is not the
        # caller's bad input: it goes up as the failure it is.
        if exc.filename is None:
            raise
        print(f"error: {exc.filename}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
