"""python manage.py start_run --team repo-fix --scenario first-flight [--wait]"""

from __future__ import annotations

import json
import math
import sys
import time
from argparse import ArgumentParser, ArgumentTypeError
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from config.commandline import refused
from dashboard import actions
from dashboard.errors import for_command
from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime import flight, status, views
from runtime.cli import exit_status, format_bill, format_findings
from runtime.cli_args import setting, setting_seconds, team_flag
from runtime.diagnose import diagnose
from runtime.terminal import plain
from services import baseline as baselines
from services import keys, runs
from teams import TEAMS

OPERATOR = "operator"  # who the command line's runs are started by
WAITED = 600.0  # seconds --wait waits unless --timeout says


def seconds(text: str) -> float:
    """--timeout: checked before the run starts, since after it the run is on its way."""
    try:
        number = float(text)
    except ValueError:
        raise ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (0 < number < math.inf):
        raise ArgumentTypeError(f"{text}: --wait waits more than 0 seconds")
    return number


def scenarios() -> str:
    """Every installed team and its scenarios, each with what it shows, the default first."""
    lines = []
    for name, team in TEAMS.items():
        lines.append(f"{name} ({', '.join(team.agents)})")
        for scenario in team.scenarios.values():
            default = " (default)" if scenario.name == team.default_scenario else ""
            lines.append(f"  {scenario.name}{default}: {scenario.description}")
    return "\n".join(lines)


class Command(BaseCommand):
    help = (
        "Start a team run on the workers; prints its id (and with --wait, how it ended). With "
        "--wait it exits as `python -m runtime fly` does: 0 done, 3 another verdict (failed, "
        "halted, out_of_turns, inconclusive, escalated, compensated: done with its money steps "
        "undone), 4 interrupted or dead-lettered "
        "(waiting for a person); 1 still running when --timeout passed, 2 refused."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--team", default="repo-fix", help=f"one of {', '.join(TEAMS)} (default: repo-fix)"
        )
        parser.add_argument(
            "--scenario", help="default: the team's own first scenario (--list names them)"
        )
        parser.add_argument(
            "--list",
            action="store_true",
            help="say what each team's scenarios do, and start nothing",
        )
        parser.add_argument("--task", help="the task text (default: the scenario's)")
        # Refused by argparse naming the flag, within the bounds the settings give each, as
        # `python -m runtime fly` refuses them: plain numbers were refused by the settings'
        # check, naming a field ("bad settings: field 'max_turns'") the command line has not.
        parser.add_argument("--allowance", type=setting("allowance"), help="token allowance")
        parser.add_argument("--max-turns", type=setting("max_turns"), help="turn cap per agent")
        parser.add_argument(
            "--max-seconds", type=setting_seconds("max_seconds"), help="wall-clock ceiling"
        )
        parser.add_argument("--model", choices=["scripted", "endpoint", "local"])
        parser.add_argument("--order", help="support-desk: the order the ticket is about")
        parser.add_argument(
            "--reflect", action="store_true", help="repo-fix: a critic reads the draft first"
        )
        parser.add_argument(
            "--votes",
            type=team_flag("--votes"),
            help="samples of the critical decision (1, 3 or 5)",
        )
        parser.add_argument(
            "--baseline",
            action="store_true",
            help="also fly the single-agent baseline (the solo coder on the same task), linked",
        )
        parser.add_argument(
            "--key",
            default="",
            help="an idempotency key: the command run again with it starts no second run, "
            "it prints the run the first started",
        )
        parser.add_argument(
            "--wait",
            action="store_true",
            help="block until the run ends; exit 0 done, 3 another verdict, 4 interrupted",
        )
        parser.add_argument(
            "--timeout", type=seconds, help=f"seconds --wait waits (default {WAITED:g})"
        )
        parser.add_argument(
            "--json",
            action="store_true",
            help="with --wait: how the run ended as one JSON object (status, reason, bill, "
            "findings), for scripts",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["list"]:
            self.stdout.write(scenarios())
            return
        if options["json"] and not options["wait"]:
            raise refused("--json says how the run ended, so it goes with --wait")
        if options["timeout"] is not None and not options["wait"]:
            # It was taken and did nothing: the run went on for as long as it ran.
            raise refused("--timeout is how long --wait waits, so it goes with --wait")
        asked = actions.NewRun(
            team=options["team"],
            scenario=options["scenario"],
            task=options["task"],
            model=options["model"],
            allowance=options["allowance"],
            max_turns=options["max_turns"],
            max_seconds=options["max_seconds"],
            order=options["order"],
            reflect=options["reflect"],
            votes=options["votes"],
            baseline=options["baseline"],
        )
        key = options["key"]
        if key and (why := keys.refusal(key)):
            raise refused(f"--key: {why}")
        # Keyed as the command line, a name no person signing in has: a web user named
        # "operator" does not share its keys (its runs are started by "operator" all the same).
        owner = keys.command_line(OPERATOR)
        try:
            # Sent again, answered before anything is checked here: what changed since (the
            # endpoint's settings, the local model server) does not refuse the run it began.
            begun = asked.answered(OPERATOR, key, owner) if key else None
            if begun is None:
                if refusals := asked.refusals():
                    raise refused(
                        "; ".join(
                            f"--{k.replace('_', '-')}: {why}"
                            for k, said in refusals.items()
                            for why in said
                        )
                    )
                begun = asked.start(by=OPERATOR, key=key, keyed_as=owner)
        except runs.RunError as exc:
            raise for_command(exc) from None
        run_id = begun.run_id
        if not options["json"]:
            self.stdout.write(run_id)  # with --json, in the object: stdout is JSON alone
        if options["baseline"]:
            # Its id was said nowhere: stdout stays the team run's alone, for scripts.
            [*_, solo] = baselines.baselines_of(run_id)
            self.stderr.write(f"single-agent baseline: {solo} (manage.py diff {run_id} {solo})")
        if not options["wait"]:
            return
        waited = WAITED if options["timeout"] is None else options["timeout"]
        deadline = time.monotonic() + waited
        while status.is_active(state := runs.status_of(run_id)):
            if time.monotonic() > deadline:
                raise CommandError(f"run {run_id} is still {state} after {waited:g} s")
            time.sleep(0.2)
        projection.catch_up()
        records = flight.run_records(DjangoJournal(), run_id)
        bill, found = views.bill(records), diagnose(records)
        reason = RunSummary.objects.filter(run_id=run_id).values_list("reason", flat=True).first()
        if options["json"]:
            said = {"run_id": run_id, "status": state, "reason": reason or ""}
            self.stdout.write(json.dumps({**said, "bill": bill, "findings": found}, indent=2))
        else:
            # As `python -m runtime fly` says how a run ended: where this printed the bill's
            # JSON, some 150 lines, to read at a terminal; as plain text (a reason or a finding
            # may quote a model: its escape sequences are shown, not obeyed).
            ended = f"status: {state}" + (f" ({reason})" if reason else "")
            for text in (ended, format_bill(bill), format_findings(found)):
                self.stdout.write(plain(text))
        # And exits as fly does, where it exited 0 however the run ended: a script waiting on
        # a run could not tell a failed one from a done one without reading what was printed.
        if code := exit_status(state):
            self.stdout.flush()
            sys.exit(code)
