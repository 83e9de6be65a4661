"""What people do to runs, each built once for the pages, the API and the commands: start a run,
stop it at a turn boundary, resume it.

The services (`services.runs`) do the work and raise typed refusals (dashboard/errors.py says how
each is answered). Whether this person may do it is the caller's to check first
(dashboard/access.py).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from runtime import baseline, written
from runtime.openai_client import OLD_BACKEND_NAMES
from runtime.unseen import unseen_reason
from services import baseline as baselines
from services import keys, run_cap, runs
from services.asked import shown
from teams import TEAMS
from teams.desk.settings import ORDER_ID, ORDER_ID_RULE

REASON_MAX = written.REASON_MAX  # characters of a stated reason that are kept

# What a person may ask of a new run, the same on the page and in the API.
TASK_MAX = 2_000  # characters
SCENARIO_MAX = 64  # characters of a scenario's name
ALLOWANCE_MAX = 10_000_000  # tokens
TURNS_MAX = 5_000  # model calls per agent run
SECONDS_MAX = 86_400  # the wall-clock ceiling
ORDER = ORDER_ID  # the support desk's rule (teams/desk/settings.py)
ORDER_REFUSAL = ORDER_ID_RULE
SCRIPTED_TASK = (
    "With the scripted backend the agents say what the scenario scripts, whatever the task: "
    "a task of your own needs a model backend."
)


def blank_team() -> str:
    """The refusal of a team left blank (the form's list offers no blank; the API's body can)."""
    return f"the team is blank: name one of {', '.join(sorted(TEAMS))}"


def team_refusal(team: str) -> str | None:
    """Why `team` names no team a run can be started of (blank, or none here), in the words
    of the new-run form and the API's 422 alike; None when it names one."""
    if not team.strip():
        return blank_team()
    if team not in TEAMS:
        return f"{shown(team)} is no team here: name one of {', '.join(sorted(TEAMS))}"
    return None


def task_refusal(task: str) -> str | None:
    """Why a task cannot be given as written, naming the character and where it is: a control
    character (not a tab or a line break) or half a UTF-16 pair, or nothing that can be seen
    (only spaces and U+200B passed "not blank" and the run's task read as empty); None when
    it can."""
    return written.unwritten_reason(task, "task") or unseen_reason(
        task, "task", "say what to do in words, or leave it out"
    )


def written_task_refusals(task: str) -> list[str]:
    """The refusals of a task whatever backend is to run it: its length, then what it holds.
    NewRun.task_refusals says them after the backend's; the API alone where the backend asked
    for is none (api/run_schemas.RunIn)."""
    said = []
    # The form and the API's body leave the length to this (said in these words, beside the
    # rest), as the command line does.
    if len(task) > TASK_MAX:
        said.append(f"the task is {len(task):,} characters; at most {TASK_MAX:,}")
    if why := task_refusal(task):
        said.append(why)
    return said


@dataclass(frozen=True)
class NewRun:
    """What a person asks for when starting a run: the page's form, the API's body, the
    start_run command's options.

    Empty means the scenario's own (task) or the scenario's preset (the rest); `order` is the
    support desk's order the ticket is about.
    """

    team: str
    scenario: str | None
    task: str | None = None
    model: str | None = None
    allowance: int | None = None
    max_turns: int | None = None
    max_seconds: float | None = None
    order: str | None = None
    baseline: bool = False  # also fly the single-agent baseline, linked to this run
    reflect: bool = False  # repo-fix: a critic reads the draft before review
    votes: int | None = None  # samples of the team's critical decision (1, 3 or 5)

    def refusals(self) -> dict[str, list[str]]:
        """What is wrong with the request as a whole, by field, every refusal of a field at
        once: the form shows each beside its box, the API answers 422 naming them (with its
        schema's faults: api/run_schemas.RunIn). (Settings a team lacks (an order, a vote, a
        critic to reflect with) are the service's to refuse, as a 400 saying which.)"""
        found: dict[str, list[str]] = {}
        if why := team_refusal(self.team):
            found["team"] = [why]
        if said := self.scenario_refusals():
            found["scenario"] = said
        if said := self.task_refusals():
            found["task"] = said
        # The form and the API's body hold it to the pattern themselves; the command did not,
        # and its refusal named "settings.desk.order_id" in pydantic's words.
        # `--order ''` too, which started a run on a fresh order as if none were given.
        if self.order is not None and not re.fullmatch(ORDER, self.order):
            found["order"] = [ORDER_REFUSAL]
        backend = OLD_BACKEND_NAMES.get(self.model or "", self.model)
        if backend == "endpoint" and (why := runs.endpoint_unusable()):
            found["model"] = [why]
        return found

    def scenario_refusals(self) -> list[str]:
        """Every refusal of the scenario: one the team has not (named beside its field, where
        the plan's refusal was a 400 about the whole), then what it holds (a NUL, half a
        UTF-16 pair, a control character). The API's body leaves the NUL to this (RunIn's
        judged_whole): refused by the body's guard, it was said alone, without the rest."""
        if not self.scenario:
            return []
        said = []
        if len(self.scenario) > SCENARIO_MAX:
            # Said whatever the team: the API's body leaves the length to this (its half a
            # pair came back from the schema's length check as "not a unicode string").
            said.append(
                f"the scenario is {len(self.scenario):,} characters; at most {SCENARIO_MAX}"
            )
        elif not team_refusal(self.team) and self.scenario not in TEAMS[self.team].scenarios:
            known = ", ".join(sorted(TEAMS[self.team].scenarios))
            said.append(f"{shown(self.scenario)} is no scenario of {self.team}: {known}")
        if why := written.unwritten_reason(self.scenario, "scenario"):
            said.append(why)
        return said

    def task_refusals(self) -> list[str]:
        """Every refusal of the task, in the order they are said: the backend's (a scripted
        run takes none; a model's is not blank), then the text's own (its length, what it
        holds). All are said at once, where each was said only once the one before it was
        mended: a long task typed for the scripted backend was refused its length, and once
        shortened, refused again for the backend."""
        task = self.task or ""
        if self.task is not None and self.model not in (None, "scripted") and not task.strip():
            return ["the task is blank: leave it out for the scenario's own"]  # nothing else
        said = [SCRIPTED_TASK] if (self.model or "scripted") == "scripted" and task.strip() else []
        return said + written_task_refusals(task)

    def asked(self) -> dict[str, Any]:
        """What the request itself asks of the run, as its TeamStarted keeps it under a key
        (`asked`): the fields it sets, not what the server makes of them (the scenario's
        presets, its sandbox). Not `baseline`: a run of its own, which a start sent again
        with the key begins if the first did not get to it."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        fields.update(task=self.task or None, reflect=self.reflect or None, baseline=None)
        return {k: v for k, v in fields.items() if v is not None}

    def answered(self, by: str, key: str, keyed_as: str = "") -> runs.Begun | None:
        """The run a start sent again with `key` began already (and its baseline, begun now
        when it asks for one the first did not get to), or None when the key names no run
        yet. Asked before anything is checked against this server (its model endpoint, the
        local model, the plan): a start sent again is answered what it began whatever has
        changed here since. KeyReused (asked otherwise) or KeyTaken (not this person's run)
        when the run there is not to be answered. `keyed_as` as start's."""
        owner = keyed_as or by
        found = runs.begun_before(keys.run_id(key, owner, "run"), by, self.asked())
        if found is not None and self.baseline:
            # The baseline the first start was cut short before is a run begun now: it takes
            # a place (the run took its own when it began).
            solo = baseline_key(key, owner, found.run_id)
            baselines.start_baseline(found.run_id, by, solo, cap=settings.RUNS_PER_PERSON)
        return found

    def start(self, by: str, key: str = "", keyed_as: str = "") -> runs.Begun:
        """Record the run (and its baseline when asked) and enqueue its first step: its id,
        and whether this call began it. RunError says why not. With an idempotency key
        (services/keys.py), a start sent again answers the run the first began, and begins
        the baseline it asked for if the first was cut short before that. `keyed_as`: whom
        the key is worked out for, where not `by` (the command line's, keys.command_line).
        A person's ask: AtCapacity when `by` has settings.RUNS_PER_PERSON live runs (the
        run and its baseline take two places)."""
        if self.baseline and (why := baseline.team_refusal(self.team)):
            raise baselines.NoBaseline(why)  # refused before anything is recorded
        owner = keyed_as or by
        cap = settings.RUNS_PER_PERSON
        # The baseline's place is counted with the run's: held under the person's lock until
        # both are begun, so no other start of theirs is counted between the two.
        with run_cap.one_start_at_a_time(by) if cap > 0 and self.baseline else nullcontext():
            return self.begin(by, key, owner, cap)

    def begin(self, by: str, key: str, owner: str, cap: int) -> runs.Begun:
        """start's work, once the baseline's team is known to take one."""
        begun = runs.start(
            self.team,
            self.scenario,
            by=by,
            run_id=keys.run_id(key, owner, "run") if key else "",
            asked=self.asked() if key else None,
            task=self.task or None,
            model=self.model,
            allowance=self.allowance,
            max_turns=self.max_turns,
            max_seconds=self.max_seconds,
            desk={"order_id": self.order} if self.order else None,
            reflect=self.reflect or None,  # unticked: no setting, so any team takes it
            votes=self.votes,
            cap=cap,
            places=2 if self.baseline else 1,
        )
        if self.baseline:
            solo = baseline_key(key, owner, begun.run_id) if key else ""
            baselines.start_baseline(begun.run_id, by, solo)
        return begun


def baseline_key(key: str, by: str, team_run_id: str) -> str:
    """The id the baseline of `team_run_id` started with `key` has: the same whether a new
    run's start asked for it or the run's baseline was asked for on its own."""
    return keys.run_id(key, by, f"baseline of {team_run_id}")


@dataclass(frozen=True)
class Steering:
    """One way of steering a run: the service that does it, and what it means, in words."""

    act: Callable[[str, str, str], None]
    outcome: str


STEERING: dict[str, Steering] = {
    "interrupt": Steering(runs.interrupt, "will stop at its next turn boundary"),
    "resume": Steering(runs.resume, "resumes"),
}


class ReasonRefused(runs.RunError):
    """A steering's reason cannot be recorded as given (a 400, naming what is wrong with it);
    nothing is written."""


def steering_reason(reason: str) -> str:
    """The reason as recorded (its ends' whitespace trimmed), or ReasonRefused saying why it
    cannot be: longer than REASON_MAX, or holding a character no text here may
    (runtime/written.py). The page's stop and resume post it unchecked, and the command line
    takes any text: where the API's body refused both, the page journalled a NUL and cut a long
    reason in silence."""
    said = reason.strip()
    if why := written.reason_refusal(said):
        raise ReasonRefused(why)
    return said


def steer(run_id: str, action: str, by: str, reason: str = "") -> str:
    """Interrupt or resume the run for `by`, recording why; what happens next, in words.
    ReasonRefused (before anything is read or written), RunNotFound, RunFinished,
    NothingToChange or RunNotResumable when it cannot be done."""
    said = steering_reason(reason)
    STEERING[action].act(run_id, by, said)
    return f"{run_id} {STEERING[action].outcome}"
