"""What each older version of an event had, and how a line of it becomes today's: the
upcasters `parse_event` runs, a version at a time, and the fields each version's lines may
carry (HAD)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runtime.events.base import EventFormatError, shown
from runtime.events.team import team_started_v1_v2

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


def _model_responded_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    usage = data.get("usage", 0)
    if type(usage) is not int:
        # Said of the line's own field: wrapped, a v2 usage in a v1 line was refused as
        # 'usage.total', a field no v1 line has.
        raise EventFormatError(
            "ModelResponded v1: field 'usage': a v1 usage is its total, a whole number of "
            f"tokens, got {shown(usage)}"
        )
    return {**data, "usage": {"total": usage}, "text": None, "tool_calls": None}


def _tool_returned_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    error = data.get("error")
    if not isinstance(error, str):
        return data
    name, sep, message = error.partition(": ")
    if not (sep and name.isidentifier()):
        name, message = "Error", error
    return {**data, "error": {"type": name, "message": message}}


def _lease_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    # v1 kept no count of the work's attempts (nor, released, which grant): the defaults say
    # "not recorded", and the lease reader counts such a stream the old way, once. (A count
    # the line carries all the same is dropped before: HAD.)
    return data


def _released_v2_v3(data: dict[str, Any]) -> dict[str, Any]:
    # v2 kept no Retry-After: its default, None, says the endpoint asked nothing.
    return data


def _effect_started_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    # v1 kept no fence of its performer: the defaults, None, say it was not recorded (one the
    # line carries all the same is dropped before: HAD).
    return data


def _effect_started_v2_v3(data: dict[str, Any]) -> dict[str, Any]:
    # v2 named no tool call: the default, None. The call that started such an effect, run
    # again after its worker died, cannot be told from another call under the same key, so it
    # is judged at the gate again, as it was when the line was written: where nothing moved it
    # passes and takes the effect over; where the intent moved since, it is refused, and the
    # effect is left to the reconciler (who asks the provider what became of its key).
    return data


def _called_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    # v1 named no tool call: the default, None, says it was not recorded.
    return data


def _failed_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    # v1 recorded no usage for a failed call (an unusable reply that was paid for went
    # unbilled): the default, None, says none was recorded, and nothing is debited on replay.
    return data


def _usage_unmarked(data: dict[str, Any]) -> dict[str, Any]:
    # No version before the mark said whether a usage was estimated (ModelResponded v2,
    # ModelFailed v2): its figures read as reported, whatever a line written by hand claims.
    usage = data.get("usage")
    if isinstance(usage, dict) and "estimated" in usage:
        return {**data, "usage": {k: v for k, v in usage.items() if k != "estimated"}}
    return data


def _model_called_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    # v1 hashed no window: the default, None, says so, and replay checks its count and size.
    return data


def _exhausted_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    # v1 named no ledger: the default, None, says its figures are the halted agent's own.
    return data


def _spans_pushed_v1_v2(data: dict[str, Any]) -> dict[str, Any]:
    # v1 kept no running total: the default, None, has its reader sum the outcomes.
    return data


UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("ModelResponded", 1): _model_responded_v1_v2,
    ("ModelResponded", 2): _usage_unmarked,
    ("ToolReturned", 1): _tool_returned_v1_v2,
    ("TeamStarted", 1): team_started_v1_v2,
    ("LeaseGranted", 1): _lease_v1_v2,
    ("LeaseReleased", 1): _lease_v1_v2,
    ("LeaseReleased", 2): _released_v2_v3,
    ("EffectStarted", 1): _effect_started_v1_v2,
    ("EffectStarted", 2): _effect_started_v2_v3,
    ("FactChanged", 1): _called_v1_v2,
    ("ClaimAsserted", 1): _called_v1_v2,
    ("MutationRefused", 1): _called_v1_v2,
    ("ModelFailed", 1): _failed_v1_v2,
    ("ModelFailed", 2): _usage_unmarked,
    ("BudgetExhausted", 1): _exhausted_v1_v2,
    ("ModelCalled", 1): _model_called_v1_v2,
    ("TraceSpansPushed", 1): _spans_pushed_v1_v2,
}


# The fields each older version had, besides the envelope: what an upcaster may take from a
# line of that version. A field the current class has that the line's version did not is
# dropped before the upcast: a v1 EffectStarted carrying `lease` and `epoch` (a fence v1 never
# recorded, written into a file by hand) read as a v2 fenced by them, and the effect
# reconciler left the effect to that "performer". A field no version has is left for the
# class to refuse, as on any line. (ModelResponded and ToolReturned v1 are the reference
# runtime's lines. ModelResponded's `served` and TeamStarted's `asked` joined v2 later, without
# a version of their own: no v1 had them either.)
_STARTED_V1 = frozenset(
    {"key", "effect_type", "target", "request_hash", "intent_id", "intent_version"}
)
HAD: dict[tuple[str, int], frozenset[str]] = {
    ("ModelResponded", 1): frozenset({"usage"}),
    ("ModelResponded", 2): frozenset({"text", "tool_calls", "usage", "served"}),
    ("ToolReturned", 1): frozenset({"tool", "result", "error"}),
    ("TeamStarted", 1): frozenset({"team", "scenario", "task", "config"}),
    ("LeaseGranted", 1): frozenset({"resource", "holder", "expires"}),
    ("LeaseReleased", 1): frozenset({"resource", "holder"}),
    ("LeaseReleased", 2): frozenset(
        {"resource", "holder", "epoch", "outcome", "at_version", "attempt"}
    ),
    ("EffectStarted", 1): _STARTED_V1,
    ("EffectStarted", 2): _STARTED_V1 | {"lease", "epoch"},
    ("FactChanged", 1): frozenset(
        {"subject", "predicate", "value", "based_on", "by", "intent_version"}
    ),
    ("ClaimAsserted", 1): frozenset(
        {
            "claim_id",
            "subject",
            "predicate",
            "value",
            "based_on",
            "source",
            "by",
            "evidence",
            "supersedes",
        }
    ),
    ("MutationRefused", 1): frozenset(
        {"what", "actor", "capability", "check", "key", "held", "current", "reason"}
    ),
    ("ModelFailed", 1): frozenset({"error"}),
    ("ModelFailed", 2): frozenset({"error", "usage"}),
    ("BudgetExhausted", 1): frozenset({"spent", "allowance"}),
    ("ModelCalled", 1): frozenset({"messages", "window_chars"}),
    ("TraceSpansPushed", 1): frozenset({"endpoint", "first", "count", "bytes", "attempts"}),
}
