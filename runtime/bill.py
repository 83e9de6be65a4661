"""The bill of a run, as a fold: tokens and calls per agent, task and line, the input/output
split, each agent's model, and the budget's ledgers (allowance, spent, remaining).

`runtime.views` folds it with the run's other views; `runtime.prices` turns it into money.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any, ClassVar

from runtime import folds
from runtime.events import (
    BudgetAllocated,
    BudgetDebited,
    Event,
    ModelFailed,
    ModelResponded,
    RunForked,
    TeamStarted,
    Usage,
)
from runtime.folds import Fold, State
from runtime.journal import Recorded


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


WIDTH = 6  # a row's columns (see widened)


def widened(row: list[int]) -> list[int]:
    """A bill row as [tokens, calls, prompt, completion, calls without a split, calls whose
    usage was estimated]. A state stored before the split was kept held [tokens, calls]: its
    calls count as unsplit; one stored before estimates were marked, none: its calls' usage
    was not marked then, whatever it was."""
    if len(row) == 2:
        row.extend([0, 0, row[1]])
    if len(row) == 5:
        row.append(0)
    return row


def line_figures(row: list[int]) -> dict[str, Any]:
    """Tokens and calls, and the input/output split when every call reported one (None: some
    call said only its total, as the reference runtime's journals and old scripts do), and how
    many of the calls had their usage estimated (Usage.estimated): those tokens are Minutes'
    figures, not the vendor's."""
    row = widened(row)
    known = row[4] == 0
    return {
        "tokens": row[0],
        "calls": row[1],
        "prompt": row[2] if known else None,
        "completion": row[3] if known else None,
        "estimated": row[5],
    }


def models_of(config: dict[str, Any]) -> dict[str, Any]:
    """Which model each agent asked, from TeamStarted's settings: the run's backend, an agent's
    own backend, and the endpoint's model name."""
    return {
        "default": config.get("model") or "scripted",
        "agents": dict(config.get("models") or {}),
        "name": config.get("model_name"),
        "names": dict(config.get("model_names") or {}),
    }


def model_for(models: dict[str, Any], agent: str, asked: str | None = None) -> str | None:
    """The model an agent asked: "scripted", "local", the endpoint's model name (the agent's
    own, the run's, or else the name its calls asked for), or None when the journal does not
    say (a reference journal, an endpoint run from before calls recorded the name)."""
    if not models:
        return asked
    backend = models["agents"].get(agent, models["default"])
    if backend != "endpoint":
        return str(backend)
    named = (models.get("names") or {}).get(agent) or models["name"] or asked
    return None if named is None else str(named)


def inherited_of(
    state: State, models: dict[str, Any], asked: dict[str, str], total: int
) -> dict[str, Any] | None:
    """A fork's tokens that were its parent's (the prefix it copied), per agent and in all,
    and its own (`total` less those); None for a run that is no fork."""
    rows = state.get("inherited")
    if rows is None:
        return None
    theirs = sum(row[0] for row in rows.values())
    agents = {}
    for name, row in sorted(rows.items()):
        model = model_for(models, name, asked.get(name))
        split = parts(state, "agents", name, name, row, model)
        if split:  # priced at the parent's models, not the fork's
            model = split[-1]["model"]
            split = [{**p, "copied": True} for p in split]
        agents[name] = {**line_figures(row), "model": model, "parts": split or None}
    return {
        "agents": agents,
        "tokens": theirs,
        "own": total - theirs,
    }


def ancestors_of(state: State) -> list[tuple[str, str, dict[str, Any] | None]]:
    """The forks a fork of a fork descends through, from its journal's earlier RunForked
    events: each as (run, the run it was forked from, its copied prefix as `inherited_of`
    gives it). Empty for a run that is no fork of a fork, or a state from before they were
    kept."""
    forks = state.get("forks") or []
    models, asked = state.get("models") or {}, state.get("asked") or {}
    out = []
    for fork, child in pairwise(forks):
        then = {**state, "inherited": fork["inherited"]}
        then["before"] = state.get("before", [])[: fork["before"]]
        out.append((child["parent"], fork["parent"], inherited_of(then, models, asked, 0)))
    return out


def _less(row: list[int], taken: list[int]) -> list[int]:
    return [a - b for a, b in zip(widened(row), taken, strict=True)]


def _taken(segments: list[dict[str, Any]], table: str, name: str) -> list[int]:
    """What the segments before hold of one row: its calls before the last fork point."""
    total = [0] * WIDTH
    for seg in segments:
        for i, n in enumerate(widened(list(seg[table].get(name, [0] * WIDTH)))):
            total[i] += n
    return total


def segment(state: State, settings: dict[str, Any]) -> dict[str, Any]:
    """The calls made since the fork point before this one (or since the start), per agent and
    per line, and the models they were made on: a fork's prefix was its parent's, asked of the
    parent's models, which the fork's own settings may have changed."""
    before = state.get("before", [])
    out: dict[str, Any] = {
        "models": models_of(settings),
        "asked": dict(state.get("asked") or {}),
    }
    for table in ("agents", "lines"):
        rows = {name: _less(row, _taken(before, table, name)) for name, row in state[table].items()}
        out[table] = {name: row for name, row in rows.items() if row[1]}
    return out


def parts(
    state: State, table: str, name: str, agent: str, row: list[int], model: str | None
) -> list[dict[str, Any]] | None:
    """A row's calls split by the models they were made on: the parent's (`copied`, one part
    per fork point whose parent's models were kept) and the run's own; None for a run that is
    no such fork, whose row has one model."""
    before = state.get("before")
    if not before:
        return None
    out = []
    for seg in before:
        mine = seg[table].get(name)
        if mine:
            asked = seg["asked"].get(agent)
            out.append(
                {
                    "copied": True,
                    "model": model_for(seg["models"], agent, asked),
                    **line_figures(list(mine)),
                }
            )
    own = _less(row, _taken(before, table, name))
    if own[1]:
        out.append({"copied": False, "model": model, **line_figures(own)})
    return out


class Bill(Fold):
    """Tokens and calls per agent and per task, and the budget: allowance, spent, remaining.

    Tokens come from ModelResponded.usage, and a ModelFailed's (a reply that could not be
    used, paid for all the same: counted as a call), so a journal without BudgetDebited still
    bills; `spent` is the budget ledger's sum of BudgetDebited (or the usage total when there
    is no ledger), and `balanced` says whether the two agree.

    A fork's journal begins with its parent's events up to the fork point, their usage too:
    the bill counts them (the fork's ledgers do), and `inherited` says how many tokens of it
    were the parent's (None for a run that is no fork), so that a sum across runs can leave
    them out: they were spent once, by the parent.
    """

    name: ClassVar[str] = "bill"
    kinds: ClassVar[frozenset[str] | None] = frozenset(
        (
            "ModelResponded",
            "ModelFailed",
            "BudgetDebited",
            "TeamStarted",
            "BudgetAllocated",
            "RunForked",
        )
    )

    def start(self) -> State:
        return {
            "agents": {},
            "tasks": {},
            "lines": {},
            "allowance": None,
            "debited": 0,
            "ledger": False,
            "ledgers": {},
            "debited_by": {},
        }

    def step(self, state: State, rec: Recorded, out: folds.Out) -> None:
        e = rec.event
        if isinstance(e, ModelResponded):
            self.call(state, e, e.usage, out)
            if e.served is not None and e.served.asked:
                state.setdefault("asked", {})[e.agent or "?"] = e.served.asked
        elif isinstance(e, ModelFailed):
            if e.usage is not None:  # an answer that could not be used, paid for all the same
                self.call(state, e, e.usage, out)
        elif isinstance(e, BudgetDebited):
            state["ledger"] = True
            state["debited"] += e.amount
            agent = e.agent or "?"
            state["debited_by"][agent] = state["debited_by"].get(agent, 0) + e.amount
        elif isinstance(e, TeamStarted):
            value = e.config.get("allowance")
            state["allowance"] = value if isinstance(value, int) else None
            state["models"] = models_of(e.config)
        elif isinstance(e, BudgetAllocated):
            if e.parent is None:  # the run's pot: opened as configured, or resized by a fork
                state["allowance"] = e.allowance
            state["ledgers"][e.name] = {
                "allowance": e.allowance,
                "parent": e.parent,
                "reserve": e.reserve,
            }
        elif isinstance(e, RunForked):
            # Each agent's row as the copied prefix left it (not in start(): a state stored
            # before this was kept has no key, and a run that is no fork never gets one).
            state["inherited"] = {name: list(widened(row)) for name, row in state["agents"].items()}
            if e.parent_models is not None:
                state.setdefault("before", []).append(segment(state, e.parent_models.model_dump()))
            # Each RunForked's, in order, with how many segments were before it then: a fork
            # of a fork copied its parent's, whose prefix can then be priced without it.
            state.setdefault("forks", []).append(
                {
                    "parent": e.parent,
                    "inherited": state["inherited"],
                    "before": len(state.get("before", [])),
                }
            )

    def call(self, state: State, e: Event, usage: Usage, out: folds.Out) -> None:
        """Count one model call's usage on its agent's, task's and line's rows."""
        agent, task = e.agent or "?", e.task_id or "-"
        line = folds.key(agent, task)
        new = line not in state["lines"]
        split = usage.prompt is not None and usage.completion is not None
        for table, name in (("agents", agent), ("tasks", task), ("lines", line)):
            row = widened(state[table].setdefault(name, [0] * WIDTH))
            row[0] += usage.total
            row[1] += 1
            if split:
                row[2] += usage.prompt or 0
                row[3] += usage.completion or 0
            else:
                row[4] += 1  # a call that said only its total: the split is unknown
            if usage.estimated is not None:
                row[5] += 1  # Minutes' figures, not the vendor's
        figures = line_figures(state["lines"][line])
        if new:
            out.add(line, {"agent": agent, "task_id": task, **figures})
        else:
            out.change(line, figures)

    def result(self, state: State, rows: folds.Rows) -> dict[str, Any]:
        total = sum(row[0] for row in state["agents"].values())
        spent = state["debited"] if state["ledger"] else total

        def shares(table: dict[str, list[int]]) -> dict[str, dict[str, Any]]:
            return {
                name: {**line_figures(row), "share": _share(row[0], total)}
                for name, row in sorted(table.items())
            }

        models = state.get("models") or {}
        asked = state.get("asked") or {}

        ledgers = {}
        for name, ledger in state["ledgers"].items():
            used = (
                state["debited"] if ledger["parent"] is None else state["debited_by"].get(name, 0)
            )
            ledgers[name] = {**ledger, "spent": used, "remaining": ledger["allowance"] - used}
        allowance = state["allowance"]
        agents = {}
        for name, row in shares(state["agents"]).items():
            model = model_for(models, name, asked.get(name))
            split = parts(state, "agents", name, name, state["agents"][name], model)
            agents[name] = {**row, "model": model, "parts": split}
        lines = []
        for key, row in sorted(state["lines"].items(), key=lambda kv: folds.unkey(kv[0])):
            agent, task = folds.unkey(key)
            line = {"agent": agent, "task_id": task, **line_figures(row)}
            model = model_for(models, agent, asked.get(agent))
            line["parts"] = parts(state, "lines", key, agent, row, model)
            lines.append(line)
        return {
            "agents": agents,
            "tasks": shares(state["tasks"]),
            "lines": lines,
            "ledgers": ledgers,
            "total": {
                **line_figures(
                    [sum(col) for col in zip(*map(widened, state["agents"].values()), strict=True)]
                    or [0] * WIDTH
                ),
            },
            "allowance": allowance,
            "spent": spent,
            "remaining": None if allowance is None else allowance - spent,
            "balanced": spent == total,
            "inherited": inherited_of(state, models, asked, total),
        }
