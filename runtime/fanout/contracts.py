"""The boundary between a supervisor and its specialists: a typed hand-off and a typed report.

A worker's whole world is its `Handoff` plus the tools it names: it cannot see the user's
message, the supervisor's state or what its siblings found. That isolation is built, not asked
for: `brief()` renders the worker's prompt from the hand-off alone, and `toolbox()` holds only
the tools the hand-off allows (the Toolbox then enforces the allowlist a second time, at
execution).

Each field of the hand-off closes a failure the supervisor would otherwise meet later:
`objective` against vague work, `inputs` against unresolved references ("the order" — which
one?), the step/token/deadline limits against unbounded workers, `return_contract` against
prose the supervisor has to parse. The `Report` is that contract as a type: success and failure
are told apart by `status`, not by reading "I wasn't able to..." out of a paragraph, and a
failure carries a reason code the recovery router can act on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from runtime.events import describe_validation
from runtime.flat import NUMBER_TOO_LONG
from runtime.tools import Tool, Toolbox
from runtime.written import unwritable

Reason = Literal["budget", "tool_error", "ambiguous", "refused", "breaker"]
"""Why a worker failed: it ran out of budget, a tool failed it, it could not tell what was
asked, or it would not do it; or, said only by the harness, a breaker stopped it (the run's
spend, or the loop breaker on its own repeated calls): not its judgement, so not a refusal."""

REASONS: tuple[Reason, ...] = ("budget", "tool_error", "ambiguous", "refused")
"""The reasons a worker may give of itself."""


class Contract(BaseModel):
    """Frozen and closed: a contract with an unknown field is a mistake, not an extension."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def _not_blank(value: str, what: str) -> str:
    if not value.strip():
        raise ValueError(f"{what} must not be blank")
    return value


def _words(value: str | None) -> str | None:
    """A worker's words, as the answer and the pages carry them: no control character but
    tabs and line breaks (runtime/written.py), which steer the terminal that shows them."""
    if value is not None and (problem := unwritable(value)):
        raise ValueError(problem)
    return value


class Handoff(Contract):
    """Everything one worker gets. What is not in here, the worker cannot see."""

    worker_id: str = Field(min_length=1, pattern=r"^\S+$")
    objective: str
    inputs: dict[str, Any] = Field(default_factory=dict)
    allowed_tools: list[str] = Field(min_length=1)
    max_steps: int = Field(gt=0)
    max_tokens: int = Field(gt=0)
    return_contract: str
    deadline_seconds: float = Field(gt=0)

    @field_validator("objective", "return_contract")
    @classmethod
    def _says_something(cls, value: str, info: ValidationInfo) -> str:
        return _not_blank(value, info.field_name or "text")

    @field_validator("inputs")
    @classmethod
    def _resolved(cls, value: dict[str, Any]) -> dict[str, Any]:
        # A None input is a reference the supervisor did not resolve; the worker would guess.
        unresolved = sorted(name for name, item in value.items() if item is None)
        if unresolved:
            raise ValueError(f"unresolved inputs {unresolved}: resolve them before handing off")
        return value

    @field_validator("allowed_tools")
    @classmethod
    def _distinct_names(cls, value: list[str]) -> list[str]:
        for name in value:
            _not_blank(name, "a tool name")
        if len(set(value)) != len(value):
            raise ValueError("a tool is named twice")
        return value

    def revised(self, **changes: Any) -> Handoff:
        """A copy with some fields changed, validated like a new hand-off (model_copy is not)."""
        return Handoff.model_validate({**self.model_dump(), **changes})


# A report's words reach the customer's answer and the pages: bounded, so a worker whose
# claim's one checked fact is the order's id cannot fill the answer with 200,000 characters.
CLAIM_CHARS = 2000
FINDINGS = 50
DEGRADED_CHARS = 2000


class Finding(Contract):
    """One claim and the tool call whose result supports it."""

    claim: str = Field(max_length=CLAIM_CHARS)
    source_call_id: str = Field(min_length=1, max_length=200)
    source_tool: str = Field(min_length=1, max_length=200)

    @field_validator("claim")
    @classmethod
    def _says_something(cls, value: str) -> str:
        _words(value)
        return _not_blank(value, "claim")


class Report(Contract):
    """What a worker returns. A failure is a normal report with a reason, never an exception."""

    worker_id: str = Field(min_length=1)
    status: Literal["ok", "failed"]
    findings: list[Finding] = Field(default_factory=list, max_length=FINDINGS)
    # validate_default so that a failed report which leaves `reason` out is refused too.
    reason: Reason | None = Field(default=None, validate_default=True)
    steps: int = Field(default=0, ge=0)
    tokens: int = Field(default=0, ge=0)
    degraded: str | None = Field(default=None, max_length=DEGRADED_CHARS)

    @field_validator("degraded")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        return _words(value)

    @field_validator("reason")
    @classmethod
    def _reason_matches_status(cls, value: Reason | None, info: ValidationInfo) -> Reason | None:
        status = info.data.get("status")  # absent when status itself was invalid
        if status == "failed" and value is None:
            raise ValueError("a failed report needs a reason: " + ", ".join(REASONS))
        if status == "ok" and value is not None:
            raise ValueError("an ok report has no failure reason")
        return value

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class ContractError(ValueError):
    """A hand-off or report that breaks its contract; the message names each field at fault."""


def parse_report(raw: str | Mapping[str, Any], handoff: Handoff) -> Report:
    """Read a worker's report (JSON text or a dict) written under `handoff`.

    Raises ContractError naming the fields at fault, or when the report speaks for another
    worker than the hand-off went to.
    """
    try:
        data = json.loads(raw) if isinstance(raw, str) else dict(raw)
    except json.JSONDecodeError as exc:
        raise ContractError(f"report is not JSON: {exc.msg} at char {exc.pos}") from None
    except ValueError:
        raise ContractError(f"report is not JSON we can read: {NUMBER_TOO_LONG}") from None
    except RecursionError:
        raise ContractError("report is nested too deeply for JSON to read") from None
    try:
        report = Report.model_validate(data)
    except ValidationError as exc:
        raise ContractError(f"report: {describe_validation(exc)}") from None
    if report.reason == "breaker":
        raise ContractError(
            "field 'reason': 'breaker' is the harness's to give, not a worker's: "
            + ", ".join(REASONS)
        )
    if report.worker_id != handoff.worker_id:
        raise ContractError(
            f"field 'worker_id': report is from {report.worker_id!r}, "
            f"the hand-off went to {handoff.worker_id!r}"
        )
    return report


REPORT_SHAPE = (
    '{"worker_id": "<your id>", "status": "ok" | "failed", '
    '"findings": [{"claim": "...", "source_call_id": "<tool call id>", "source_tool": "<tool>"}], '
    '"reason": null | "budget" | "tool_error" | "ambiguous" | "refused", '
    '"steps": <int>, "tokens": <int>, "degraded": null | "<what is missing>"}'
)


def brief(handoff: Handoff) -> str:
    """The text a worker is given: rendered from its hand-off and nothing else.

    Deterministic (inputs are rendered as sorted JSON), so a replayed run sends the same prompt.
    """
    inputs = json.dumps(handoff.inputs, sort_keys=True, ensure_ascii=False, indent=2)
    return "\n".join(
        [
            f"You are the specialist {handoff.worker_id!r}. This brief is all you know about "
            "the task: there is no other context, and other workers' results are not yours.",
            "",
            f"Objective: {handoff.objective}",
            "",
            "Inputs (already resolved: use them as given, do not look them up again):",
            inputs,
            "",
            f"Tools you may call: {', '.join(handoff.allowed_tools)}",
            f"Limits: at most {handoff.max_steps} steps and {handoff.max_tokens} tokens; "
            f"your report is due within {handoff.deadline_seconds:g} seconds.",
            "",
            f"Your report must contain: {handoff.return_contract}",
            "Every finding cites the id of the tool call whose result supports it; a claim "
            "without such a call is not a finding.",
            "If you cannot finish, report status 'failed' with a reason: 'budget' (out of "
            "steps or tokens), 'tool_error' (a tool failed you), 'ambiguous' (the objective "
            "can be read more than one way) or 'refused' (you will not do it).",
            f"Answer with one JSON object: {REPORT_SHAPE}",
        ]
    )


def toolbox(handoff: Handoff, tools: Iterable[Tool]) -> Toolbox:
    """The worker's tool belt: the tools its hand-off names, and only those.

    A named tool that does not exist is an error now, at hand-off, rather than a confusing
    observation halfway through the worker's run.
    """
    available = {t.name: t for t in tools}
    missing = [name for name in handoff.allowed_tools if name not in available]
    if missing:
        raise ContractError(f"field 'allowed_tools': no tool named {missing}")
    return Toolbox([available[name] for name in handoff.allowed_tools])
