"""What model calls cost in money: a price table per model, applied to a bill's token splits.

Prices are per million tokens, input and output apart, in one currency, configured by whoever
runs Minutes (settings, or a JSON file named by MINUTES_PRICES):

    {"currency": "USD", "models": {"small-model": {"input": 0.15, "output": 0.60}}}

Scripted and local models cost nothing and say so ("scripted: priced at zero"). A model the
table does not know, or a call that reported only its total (no input/output split, unless
both prices are the same), has no cost: None, with the reason, never a guess.

Nor is a call whose usage Minutes estimated (the vendor reported none, or a figure no count
can be, or one past what a call counts for: Usage.estimated) priced as fact: its row's cost is
None, the reason says how many calls were estimated, and the cost the estimate comes to is
given apart, as `estimate`. A person auditing the bill reconciles its costs with the vendor's
invoice: a cost is one the vendor's own figures give, to the last digit, where an estimate
may be off by half, and summed into a run's cost (and the metrics' spend across runs) it
could not be told from the rest again. So a cost stays a fact, and the guess sits beside it,
named as one, for the order of magnitude.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runtime.flat import NUMBER_TOO_LONG

FREE = {"scripted": "scripted: no model was paid for", "local": "the local model: runs here"}
MODELS_MAX = 500


class PriceError(ValueError):
    """The price table is not one; the message names the entry."""


@dataclass(frozen=True)
class Price:
    input: float  # per million input (prompt) tokens
    output: float  # per million output (completion) tokens


@dataclass(frozen=True)
class Table:
    currency: str
    models: dict[str, Price]

    def cost(
        self,
        model: str | None,
        tokens: int,
        prompt: int | None,
        completion: int | None,
        estimated: int = 0,
    ) -> tuple[float | None, str]:
        """(cost, why): the cost of these tokens on `model`, or None and why it is unknown
        (`estimated` of their calls had their usage estimated: not priced as fact, see
        `guess`)."""
        money, why = self.guess(model, tokens, prompt, completion)
        if estimated and money is not None and model not in FREE:
            calls = f"{estimated} call{'' if estimated == 1 else 's'}"
            return None, (
                f"{why}; the usage of {calls} was estimated, not reported by the vendor: about "
                f"{money:.6f} {self.currency} if the estimate is right"
            )
        return money, why

    def guess(
        self, model: str | None, tokens: int, prompt: int | None, completion: int | None
    ) -> tuple[float | None, str]:
        """(cost, why) of these tokens on `model` as if every figure were the vendor's."""
        if model in FREE:
            return 0.0, FREE[model]
        if model is None:
            return None, "the journal does not say which model answered"
        price = self.models.get(model)
        if price is None:
            return None, f"no price for {model}"
        if prompt is None or completion is None:
            if price.input == price.output:
                return round(tokens * price.input / 1e6, 6), f"{model} at one price"
            return None, "some calls reported only a total, not input and output"
        money = (prompt * price.input + completion * price.output) / 1e6
        return round(money, 6), f"{model}: {prompt:,} in, {completion:,} out"


EMPTY = Table("USD", {})


def parse(data: Any, where: str = "the price table") -> Table:
    """A Table from its JSON form; PriceError names what is wrong and where."""
    if not isinstance(data, dict):
        raise PriceError(f"{where}: expected an object with 'currency' and 'models'")
    currency = data.get("currency", "USD")
    if not isinstance(currency, str) or not 1 <= len(currency) <= 8:
        raise PriceError(f"{where}: currency must be a short name such as 'USD'")
    models = data.get("models", {})
    if not isinstance(models, dict) or len(models) > MODELS_MAX:
        raise PriceError(f"{where}: models must be an object of at most {MODELS_MAX} models")
    table = {}
    for name, entry in models.items():
        if not isinstance(entry, dict) or set(entry) - {"input", "output"}:
            raise PriceError(f"{where}: models.{name} must be {{'input': …, 'output': …}}")
        try:
            price = Price(float(entry["input"]), float(entry["output"]))
        except (KeyError, TypeError, ValueError):
            raise PriceError(
                f"{where}: models.{name} needs numbers 'input' and 'output' (per million tokens)"
            ) from None
        if min(price.input, price.output) < 0 or max(price.input, price.output) > 1e6:
            raise PriceError(f"{where}: models.{name}: prices are between 0 and 1,000,000")
        table[str(name)] = price
    return Table(currency, table)


def load(path: Path) -> Table:
    try:
        text = path.read_text()
    except OSError as exc:
        raise PriceError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PriceError(f"{path}: not JSON (line {exc.lineno}: {exc.msg})") from None
    except ValueError:
        raise PriceError(f"{path}: not JSON we can read ({NUMBER_TOO_LONG})") from None
    except RecursionError:
        raise PriceError(f"{path}: nested too deeply for JSON to read") from None
    return parse(data, str(path))


def row_cost(
    table: Table, row: dict[str, Any], model: str | None, guess: bool = False
) -> tuple[float | None, str]:
    """A bill row's cost and why (with `guess`, estimated figures priced as if reported). A
    fork's row whose calls were made on more than one model (its copied prefix on the
    parent's, see runtime.bill.parts) costs the sum of its parts, each at its own model;
    unknown when any part is."""

    def one(figures: dict[str, Any], model: str | None) -> tuple[float | None, str]:
        tokens, prompt, completion = figures["tokens"], figures["prompt"], figures["completion"]
        if guess:
            return table.guess(model, tokens, prompt, completion)
        return table.cost(model, tokens, prompt, completion, figures.get("estimated", 0))

    split = row.get("parts")
    if not split:
        return one({"prompt": None, "completion": None, **row}, model)
    money: float | None = 0.0
    whys = []
    for part in split:
        cost, why = one(part, part["model"])
        money = None if cost is None or money is None else round(money + cost, 6)
        whys.append(f"before the fork, {why}" if part["copied"] else why)
    return money, "; ".join(whys)


def priced(bill: dict[str, Any], table: Table, verified: bool) -> dict[str, Any]:
    """A bill's cost per agent, per task and in all, and per verified success (the run's cost
    when the harness verified its outcome; None when it did not: no success to divide by).
    Beside each cost, and the whole, `estimate`: what it comes to with the estimated figures
    priced as if the vendor's, where some were estimated (None otherwise)."""
    agents: dict[str, dict[str, Any]] = {}
    for name, row in bill["agents"].items():
        money, why = row_cost(table, row, row.get("model"))
        guessed = row_cost(table, row, row.get("model"), guess=True)[0]
        estimate = guessed if money is None and row.get("estimated") else None
        agents[name] = {"cost": money, "why": why, "estimate": estimate}
    known: list[float | None] = [a["cost"] for a in agents.values()]
    total = None if None in known else round(sum(c or 0.0 for c in known), 6)
    # Where every cost not known is one an estimate gives, the whole comes to an estimate too.
    either = [a["cost"] if a["cost"] is not None else a["estimate"] for a in agents.values()]
    estimate = (
        round(sum(c or 0.0 for c in either), 6) if total is None and None not in either else None
    )
    models = {name: row.get("model") for name, row in bill["agents"].items()}
    tasks: dict[str, float | None] = {}
    for line in bill["lines"]:
        money, _ = row_cost(table, line, models.get(line["agent"]))
        before = tasks.get(line["task_id"], 0.0)
        tasks[line["task_id"]] = (
            None if money is None or before is None else round(before + money, 6)
        )
    return {
        "currency": table.currency,
        "agents": agents,
        "tasks": tasks,
        "total": total,
        "estimate": estimate,
        "per_verified_success": total if verified else None,
    }
