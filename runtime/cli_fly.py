"""The command line's commands that fly a run in-process: fly (with its baseline), baseline,
resume; with the team flags `fly` offers and the loops' snapshots beside the journal.
`runtime.cli` registers them."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runtime import baseline, flight, plugins, status, streams
from runtime.cli import (
    EXIT_OK,
    NO_SANDBOX,
    faults,
    leased,
    open_journal,
    per_agent,
    report,
    run_of,
    services,
)
from runtime.cli_args import WORKSPACES, folder_arg, run_id_arg, setting, team_flag
from runtime.cli_stop import StopSignal, operator
from runtime.events import RunForked
from runtime.jsonl import JsonlJournal
from runtime.snapshots import FileSnapshots
from runtime.team import FlightConfig, Option


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


def checked(option: Option) -> Callable[[str], str]:
    """The argparse type of a team's text flag: its own check, said naming the flag."""

    def parse(text: str) -> str:
        if option.check is not None and (why := option.check(text)):
            raise argparse.ArgumentTypeError(why)
        return text

    return parse


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


def scenarios_help() -> str:
    """Each team's scenarios with their one-line descriptions: the scenario's own
    `description`, the same words the dashboard's new-run form shows."""
    lines = ["scenarios (--scenario), by team:"]
    for name, team in plugins.teams().items():
        lines.append(f"  {name}")
        lines += [f"    {s}: {scenario.description}" for s, scenario in team.scenarios.items()]
    return "\n".join(lines)


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the commands on the command line's subparsers."""
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
            kind = team_flag(option.flag) if option.kind == "int" else checked(option)
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

    resuming = sub.add_parser("resume", help="continue an interrupted or crashed run")
    resuming.add_argument("journal")
    resuming.add_argument("--run", help="which run, when the journal holds several")
    resuming.add_argument("--workspaces", type=folder_arg, help=WORKSPACES)
    resuming.add_argument("--json", action="store_true")
    resuming.add_argument("--no-sandbox", action="store_true", help=NO_SANDBOX)
    resuming.set_defaults(func=cmd_resume)
