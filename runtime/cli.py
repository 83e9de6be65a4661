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
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runtime import baseline, flight, fork, plugins, status, streams, terminal, views
from runtime.cli_args import WORKSPACES, folder_arg, kind_of, run_id_arg, setting, team_flag
from runtime.cli_lease import Driving, LeaseHeld, LeaseTaken, driving
from runtime.cli_stop import QuitAtOnce, StopSignal, operator, stop_path
from runtime.diagnose import diagnose
from runtime.events import RunForked
from runtime.faults import Faults
from runtime.journal import JournalError
from runtime.jsonl import JournalCorrupt, JsonlJournal
from runtime.model import EndpointDown, ModelError
from runtime.sandbox import Sandbox
from runtime.snapshots import FileSnapshots
from runtime.stops import ReplayDivergence
from runtime.team import FlightConfig, Option, Services

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
    out = {}
    for pair in pairs:
        agent, sep, backend = pair.partition("=")
        if not sep or not agent or not backend:
            raise flight.FlightError(f"--model-for wants AGENT=BACKEND, got {pair!r}")
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


def cmd_fly(args: argparse.Namespace) -> int:
    path = Path(args.journal)
    journal = open_journal(path, must_exist=False)
    run_id = args.run_id or flight.new_run_id()
    config = flight.plan(
        args.team,
        args.scenario,
        run_id,
        allowance=args.allowance,
        model=args.model,
        max_turns=args.max_turns,
        retries=args.retries,
        models=per_agent(args.model_for) or None,
        sandbox=False if args.no_sandbox else None,
        **team_settings(args),
    )
    if args.baseline and (why := baseline.refusal(config)):
        raise flight.FlightError(f"--baseline: {why}")
    here = services(args)
    flight.preflight(config, here)  # before the run's lease is taken
    stop = StopSignal(path, run_id)
    previous = stop.install()
    root = Path(args.workspaces) if args.workspaces else path.resolve().parent
    try:
        with leased(journal, run_id, fresh=True) as held:
            outcome = flight.fly(
                held.journal,
                config,
                run_id,
                root,
                stop=stop,
                services=here,
                faults=faults(),
                snapshots=snapshots_of(path),
            )
            held.outcome = outcome.status
    finally:
        signal.signal(signal.SIGINT, previous)
    forget_snapshots(path, outcome)
    if not args.baseline:
        return report(outcome, journal, path, args.json)
    compared = fly_baseline(args, journal, path, run_id, config)
    # One JSON document: the team run's outcome with the comparison in it.
    code = report(outcome, journal, path, args.json, {"comparison": compared})
    if not args.json:
        print_baseline(compared)
    return code


def fly_baseline(
    args: argparse.Namespace,
    journal: JsonlJournal,
    path: Path,
    team_run_id: str,
    team_config: FlightConfig,
) -> dict[str, Any]:
    """Fly the team run's single-agent baseline into the same journal; the two side by side
    (runtime/baseline.py)."""
    run_id = flight.new_run_id()
    config = baseline.plan_baseline(
        team_config, team_run_id, run_id, sandbox=False if args.no_sandbox else None
    )
    root = Path(args.workspaces) if args.workspaces else path.resolve().parent
    with leased(journal, run_id, fresh=True) as held:
        here = services(args)
        outcome = flight.fly(held.journal, config, run_id, root, services=here, faults=faults())
        held.outcome = outcome.status
    compared = baseline.compare(
        baseline.of_records(team_run_id, flight.figured_records(journal, team_run_id)),
        baseline.of_records(run_id, flight.figured_records(journal, run_id)),
    )
    compared["baseline"]["reason"] = outcome.reason
    return compared


def print_baseline(compared: dict[str, Any]) -> None:
    solo = compared["baseline"]
    print(f"baseline {solo['run_id']}: {solo['outcome']} ({solo['reason']})")
    print(baseline.format_comparison(compared))


def cmd_baseline(args: argparse.Namespace) -> int:
    path = Path(args.journal)
    journal = open_journal(path)
    team_run_id = run_of(journal, args.run)
    events = [r.event for r in journal.read(streams.journal(team_run_id))]
    forked = next((e for e in events if isinstance(e, RunForked)), None)
    config = baseline.as_flown(flight.recorded_config(events, team_run_id), forked)
    compared = fly_baseline(args, journal, path, team_run_id, config)
    if args.json:
        print(json.dumps(compared, indent=2))
    else:
        print_baseline(compared)
    return EXIT_OK


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


def options() -> list[Option]:
    """Every installed team's flags, once each (two teams may offer one flag for one setting)."""
    found: dict[str, Option] = {}
    for team in plugins.teams().values():
        for option in team.options:
            seen = found.setdefault(option.flag, option)
            if (seen.setting, seen.into) != (option.setting, option.into):
                raise flight.FlightError(f"two teams offer {option.flag} for different settings")
    return list(found.values())


def dest(option: Option) -> str:
    return "team_" + option.flag.lstrip("-").replace("-", "_")


def team_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The team flags given, as settings (a flag not given sets nothing)."""
    given = {}
    for option in options():
        value = getattr(args, dest(option))
        if value is not None and value is not False:  # 0 == False: `in` dropped a 0
            given[option.setting] = option.value(value)
    return given


def snapshots_of(path: Path) -> FileSnapshots:
    """Where the agent loops of a journal's runs keep their snapshots: a directory beside it
    (runtime/snapshots.py; a cache: deleting it costs a longer resume, nothing else)."""
    return FileSnapshots(path.resolve().parent / f"{path.name}.snapshots")


def forget_snapshots(path: Path, outcome: flight.FlightOutcome) -> None:
    """A run that ended with a verdict is not resumed: its loop's snapshot goes, and the
    directory beside the journal with it once nothing else is in it (as workers do)."""
    if outcome.status not in status.VERDICTS:
        return
    kept = snapshots_of(path)
    kept.discard(streams.journal(outcome.run_id))
    with contextlib.suppress(OSError):  # another run's snapshot is still there, or none was
        kept.directory.rmdir()


def cmd_resume(args: argparse.Namespace) -> int:
    path = Path(args.journal)
    journal = open_journal(path)
    run_id = run_of(journal, args.run)
    root = Path(args.workspaces) if args.workspaces else path.resolve().parent
    here = services(args)
    # Before its lease is taken or its stop lifted: a run that cannot go on here is refused,
    # and one that finished is said to have, each writing nothing.
    if not flight.unfinished(journal, run_id, root, here):
        return report(flight.resume(journal, run_id, root, services=here), journal, path, args.json)
    stop = StopSignal(path, run_id)
    with leased(journal, run_id) as held:  # nothing is lifted for a run not ours
        stop.clear()  # resuming is the operator lifting the stop
        previous = stop.install()
        try:
            outcome = flight.resume(
                held.journal,
                run_id,
                root,
                stop=stop,
                by=operator(),
                services=here,
                faults=faults(),
                snapshots=snapshots_of(path),
            )
        finally:
            signal.signal(signal.SIGINT, previous)
        held.outcome = outcome.status
    forget_snapshots(path, outcome)
    return report(outcome, journal, path, args.json)


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


def cmd_interrupt(args: argparse.Namespace) -> int:
    path = Path(args.journal)
    if path.exists() and not path.is_file():  # a folder was asked to stop, and said yes
        raise flight.FlightError(f"{path} is not a journal file: {kind_of(path)}")
    stop = stop_path(path)
    stop.write_text(json.dumps({"by": operator(), "reason": args.reason}))
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


def scenarios_help() -> str:
    """Each team's scenarios with their one-line descriptions: the scenario's own
    `description`, the same words the dashboard's new-run form shows."""
    lines = ["scenarios (--scenario), by team:"]
    for name, team in plugins.teams().items():
        lines.append(f"  {name}")
        lines += [f"    {s}: {scenario.description}" for s, scenario in team.scenarios.items()]
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m runtime",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="command", required=True)

    fly = sub.add_parser(
        "fly",
        help="fly a team in-process",
        epilog=scenarios_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fly.add_argument("--team", required=True, choices=sorted(plugins.teams()))
    fly.add_argument("--scenario", help="the scenario (default: the team's first)")
    fly.add_argument("--journal", required=True, help="the JSONL file to journal to")
    fly.add_argument("--run-id", type=run_id_arg, help="the run's id (default: a new r-… id)")
    fly.add_argument(
        "--allowance", type=setting("allowance"), help="token allowance for the whole run"
    )
    fly.add_argument("--max-turns", type=setting("max_turns"), help="turn cap per agent")
    fly.add_argument(
        "--retries", type=setting("retries"), help="automatic retries of a failed tool call"
    )
    fly.add_argument(
        "--model",
        choices=["scripted", "endpoint", "local"],
        help="scripted (default), an OpenAI-compatible endpoint from MINUTES_MODEL_*, or the "
        "local model server at MINUTES_LOCAL_MODEL_URL",
    )
    fly.add_argument(
        "--model-for",
        action="append",
        default=[],
        metavar="AGENT=BACKEND",
        help="run one agent on another backend, e.g. --model-for reviewer=endpoint, or on "
        "another endpoint model: reviewer=endpoint:MODEL (repeatable)",
    )
    for option in options():
        if option.kind == "switch":
            fly.add_argument(option.flag, dest=dest(option), action="store_true", help=option.help)
        else:
            kind = team_flag(option.flag) if option.kind == "int" else str
            fly.add_argument(option.flag, dest=dest(option), type=kind, help=option.help)
    fly.add_argument("--workspaces", type=folder_arg, help=WORKSPACES)
    fly.add_argument("--no-sandbox", action="store_true", help=NO_SANDBOX)
    fly.add_argument("--json", action="store_true", help="print the outcome as JSON")
    fly.add_argument(
        "--baseline",
        action="store_true",
        help="then fly the single-agent baseline (the solo coder on the same task, template and "
        "model) into the same journal, and print the two side by side",
    )
    fly.set_defaults(func=cmd_fly)

    solo = sub.add_parser(
        "baseline",
        help="fly a team run's single-agent baseline into its journal and compare the two",
    )
    solo.add_argument("journal")
    solo.add_argument("--run", help="the team run, when the journal holds several")
    solo.add_argument("--workspaces", type=folder_arg, help=WORKSPACES)
    solo.add_argument("--no-sandbox", action="store_true", help=NO_SANDBOX)
    solo.add_argument("--json", action="store_true", help="print the comparison as JSON")
    solo.set_defaults(func=cmd_baseline)

    for name, func, text in (
        ("resume", cmd_resume, "continue an interrupted or crashed run"),
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
        if name == "resume":
            cmd.add_argument("--workspaces", type=folder_arg, help=WORKSPACES)
            cmd.add_argument("--json", action="store_true")
            cmd.add_argument("--no-sandbox", action="store_true", help=NO_SANDBOX)
        cmd.set_defaults(func=func)

    from runtime import cli_across as across  # they import this module's helpers
    from runtime import cli_otlp

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
