"""Checking a worker's findings against its own tool results, before anything is built on them.

A supervisor that composes an answer from reports inherits every error in them; one made-up
figure in one report becomes the answer's figure. So between collecting and composing, each
finding is checked against the tool call it cites, by code, not by the worker that wrote it:

    unknown_call   the cited call id is not among this worker's own tool results
    call_failed    the cited call failed: an error supports nothing
    wrong_tool     the call exists but was made to another tool than the finding names
    facts_missing  the claim's key facts are not in the call's result

Key facts are what can be checked deterministically: every number (compared as a number, so
"129.00" matches 129.0 and "1,290" matches 1290), every id-like token (letters and digits
together, such as A-4471 or ORD123; compared case-insensitively) and every double-quoted phrase.
A claim with none of these is accepted once its call stands: the check catches invented figures
and references, not wrong paraphrases.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from runtime.events import Event, FindingUnsupported, ToolReturned
from runtime.fanout.contracts import Finding, Report
from runtime.tools import Outcome

UnsupportedReason = Literal["unknown_call", "call_failed", "wrong_tool", "facts_missing"]


class Unsupported(BaseModel):
    """A finding its cited call does not back, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    worker_id: str
    claim: str
    call_id: str
    reason: UnsupportedReason
    missing: list[str] = Field(default_factory=list)
    detail: str = ""

    def event(self, run_id: str = "") -> FindingUnsupported:
        return FindingUnsupported(run_id=run_id, agent=self.worker_id, **self.model_dump())


ToolResult = Outcome | ToolReturned
"""What a call came to: an Outcome as `execute` returns it, or the journalled ToolReturned."""


# --- key facts ---------------------------------------------------------------------------------

# Id-like: a run of letters, digits, '-' and '_' holding at least one letter and one digit.
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*[A-Za-z0-9]|[A-Za-z0-9]")
# A number: thousands groups with commas, or plain digits, either with a decimal part.
_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”')


@dataclass(frozen=True)
class KeyFacts:
    numbers: tuple[str, ...]  # as written in the claim
    ids: tuple[str, ...]
    quotes: tuple[str, ...]


def key_facts(text: str) -> KeyFacts:
    """The checkable facts in a claim, in the order they appear, each once."""
    quotes = [a or b for a, b in _QUOTED.findall(text)]
    ids = [w for w in _WORD.findall(text) if _is_id(w)]
    # Numbers inside an id belong to the id: "A-4471" is one fact, not two.
    rest = _WORD.sub(lambda m: " " if _is_id(m.group()) else m.group(), text)
    numbers = _NUMBER.findall(rest)
    return KeyFacts(_distinct(numbers), _distinct(ids), _distinct(quotes))


def _is_id(word: str) -> bool:
    return any(c.isalpha() for c in word) and any(c.isdigit() for c in word)


def _distinct(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def _as_number(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", "")).normalize()
    except InvalidOperation:
        return None


class _Evidence:
    """A result's JSON text, indexed the way claims are read."""

    def __init__(self, result: Any) -> None:
        self.text = json.dumps(result, ensure_ascii=False, sort_keys=True, default=str)
        folded = self.text.casefold()
        self.words = {w.casefold() for w in _WORD.findall(self.text)}
        self.numbers = {n for n in map(_as_number, _NUMBER.findall(self.text)) if n is not None}
        self.flat = " ".join(folded.split())

    def lacks(self, facts: KeyFacts) -> list[str]:
        missing = [n for n in facts.numbers if _as_number(n) not in self.numbers]
        missing += [i for i in facts.ids if i.casefold() not in self.words]
        missing += [q for q in facts.quotes if " ".join(q.casefold().split()) not in self.flat]
        return missing


# --- the check ---------------------------------------------------------------------------------


def verify(report: Report, tool_results: Mapping[str, ToolResult]) -> list[Unsupported]:
    """Every finding of `report` that `tool_results` (this worker's own calls, by call id)
    does not support, in the report's order. An empty list means every finding stands."""
    out = []
    for finding in report.findings:
        problem = _check(finding, tool_results.get(finding.source_call_id))
        if problem is not None:
            reason, missing, detail = problem
            out.append(
                Unsupported(
                    worker_id=report.worker_id,
                    claim=finding.claim,
                    call_id=finding.source_call_id,
                    reason=reason,
                    missing=missing,
                    detail=detail,
                )
            )
    return out


def _check(
    finding: Finding, cited: ToolResult | None
) -> tuple[UnsupportedReason, list[str], str] | None:
    if cited is None:
        return "unknown_call", [], "no call with this id among the worker's own tool results"
    if cited.error is not None:
        return "call_failed", [], f"the call failed: {cited.error}"
    if cited.tool != finding.source_tool:
        return "wrong_tool", [], f"the call went to {cited.tool!r}, not {finding.source_tool!r}"
    missing = _Evidence(cited.result).lacks(key_facts(finding.claim))
    if missing:
        return "facts_missing", missing, "not in the cited result: " + ", ".join(missing)
    return None


def tool_results(events: Iterable[Event], worker_id: str) -> dict[str, ToolReturned]:
    """A worker's own tool results from the journal, by call id; a retried call's last
    attempt stands. Other agents' calls are left out: a worker cites only what it saw."""
    results: dict[str, ToolReturned] = {}
    for event in events:
        if isinstance(event, ToolReturned) and event.agent == worker_id and event.call_id:
            results[event.call_id] = event
    return results
