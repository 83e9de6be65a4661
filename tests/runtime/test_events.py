from __future__ import annotations

import pytest

from runtime import flat
from runtime.events import (
    ALL_KINDS,
    BY_KIND,
    HAD,
    UPCASTERS,
    ClaimAsserted,
    EffectStarted,
    EventFormatError,
    FactChanged,
    LeaseGranted,
    LeaseReleased,
    ModelResponded,
    MutationRefused,
    ToolReturned,
    Usage,
    parse_event,
)
from tests.runtime.event_samples import SAMPLES


def test_a_v1_model_response_reads_as_v2_with_usage_and_no_recorded_text():
    event = parse_event({"kind": "ModelResponded", "v": 1, "agent": "coder", "usage": 120})
    assert isinstance(event, ModelResponded)
    assert event.usage == Usage(total=120)
    assert event.text is None and event.tool_calls is None
    assert not event.replayable


def test_a_failure_is_quoted_as_type_and_message_everywhere():
    # Reasons, outcomes, pages and the trace all quote a failure through str().
    event = parse_event(
        {"kind": "ToolReturned", "agent": "coder", "tool": "run_tests", "error": "OSError: disk"}
    )
    assert isinstance(event, ToolReturned)
    assert str(event.error) == "OSError: disk"
    assert f"({event.error})" == "(OSError: disk)"


def test_a_line_without_v_is_version_1():
    event = parse_event({"kind": "ModelResponded", "agent": "coder", "usage": 95})
    assert event.usage.total == 95


def test_a_v1_tool_error_string_reads_as_type_and_message():
    event = parse_event(
        {
            "kind": "ToolReturned",
            "agent": "coder",
            "tool": "run_tests",
            "error": "RuntimeError: runner exited 137",
        }
    )
    assert isinstance(event, ToolReturned)
    assert event.error is not None
    assert (event.error.type, event.error.message) == ("RuntimeError", "runner exited 137")


def test_a_v1_tool_error_without_a_type_keeps_its_whole_text():
    event = parse_event({"kind": "ToolReturned", "tool": "x", "error": "unknown tool"})
    assert event.error is not None
    assert (event.error.type, event.error.message) == ("Error", "unknown tool")


def test_a_v1_lease_grant_and_release_read_as_v2_that_counted_nothing():
    grant = parse_event(
        {"kind": "LeaseGranted", "v": 1, "resource": "x", "holder": "w", "expires": 1}
    )
    assert isinstance(grant, LeaseGranted) and grant.v == 2
    assert (grant.at_version, grant.attempt) == (None, 0)
    released = parse_event({"kind": "LeaseReleased", "v": 1, "resource": "x", "holder": "w"})
    assert isinstance(released, LeaseReleased)
    assert (released.epoch, released.outcome, released.attempt) == (None, "", 0)
    assert released.v == 3 and released.retry_after is None  # and through v2 to v3
    v2 = parse_event({"kind": "LeaseReleased", "v": 2, "resource": "x", "holder": "w", "epoch": 4})
    assert isinstance(v2, LeaseReleased) and (v2.epoch, v2.retry_after) == (4, None)


def test_a_v1_fact_change_and_claim_read_as_v2_made_by_no_recorded_call():
    changed = parse_event(
        {
            "kind": "FactChanged",
            "v": 1,
            "subject": "order:1",
            "predicate": "status",
            "value": "shipped",
            "based_on": 1,
            "by": "order-agent",
        }
    )
    assert isinstance(changed, FactChanged) and (changed.v, changed.call) == (2, None)
    claimed = parse_event(
        {
            "kind": "ClaimAsserted",
            "v": 1,
            "claim_id": "cl-1",
            "subject": "order:1",
            "predicate": "status",
            "value": "shipped",
            "based_on": 1,
            "source": "model",
            "by": "order-agent",
        }
    )
    assert isinstance(claimed, ClaimAsserted) and (claimed.v, claimed.call) == (2, None)


def test_a_v1_refusal_reads_as_v2_of_no_recorded_call():
    row = {
        "kind": "MutationRefused",
        "v": 1,
        "what": "support-agent setting order o-1 to cancelled",
        "actor": "support-agent",
        "capability": "set_status",
        "check": "evidence",
        "reason": "order o-1 never had version 5 (it is at 1)",
    }
    refused = parse_event(row)
    assert isinstance(refused, MutationRefused) and (refused.v, refused.call) == (2, None)
    # A call a v1 line carries all the same (written by hand) is not one v1 recorded.
    assert parse_event({**row, "call": "run-r-1@7"}).call is None


def test_a_v2_effect_start_reads_as_v3_started_by_no_recorded_call():
    row = {
        "kind": "EffectStarted",
        "v": 2,
        "key": "fx-1",
        "effect_type": "refund",
        "target": "order:o-1",
        "request_hash": "0" * 32,
        "lease": "lease-r-1",
        "epoch": 2,
    }
    started = parse_event(row)
    assert isinstance(started, EffectStarted)
    assert (started.v, started.call, started.lease, started.epoch) == (3, None, "lease-r-1", 2)
    # A call a v2 line carries all the same (written by hand) is not one v2 recorded: the call
    # run again would take over an effect no record says it started.
    assert parse_event({**row, "call": "run-r-1@7"}).call is None


def test_the_stored_row_is_never_rewritten_by_reading_it():
    row = {"kind": "ModelResponded", "v": 1, "usage": 7}
    parse_event(row)
    assert row == {"kind": "ModelResponded", "v": 1, "usage": 7}


@pytest.mark.parametrize(
    "row, problem",
    [
        ({"agent": "coder"}, "missing field 'kind'"),
        # There, but not a name: it said "missing field 'kind'" of a kind given as 5.
        ({"kind": 5}, "field 'kind' must be the event's kind as a string, got 5"),
        ({"kind": None}, "field 'kind' must be the event's kind as a string, got None"),
        ({"kind": "Teleported"}, "unknown kind 'Teleported'"),
        ({"kind": "BudgetDebited"}, "missing field 'amount'"),
        ({"kind": "BudgetDebited", "amount": "lots"}, "field 'amount'"),
        ({"kind": "BudgetDebited", "amount": 3, "colour": "red"}, "unexpected field 'colour'"),
        ({"kind": "ModelResponded", "v": 9, "usage": {"total": 1}}, "newer Minutes"),
        ({"kind": "ModelResponded", "v": "2"}, "field 'v' must be a positive integer"),
        (
            {
                "kind": "ModelResponded",
                "v": 2,
                "text": "",
                "tool_calls": [],
                "usage": {"total": -1},
            },
            "field 'usage.total'",
        ),
        # v1's usage is its total: a v2 usage in a v1 line was refused as 'usage.total'
        (
            {"kind": "ModelResponded", "v": 1, "usage": {"total": 5}},
            "ModelResponded v1: field 'usage': a v1 usage is its total, a whole number of "
            "tokens, got {'total': 5}",
        ),
        (
            {"kind": "ModelResponded", "v": 1, "usage": True},
            "ModelResponded v1: field 'usage': a v1 usage is its total",
        ),
        # Tokens are whole numbers as JSON writes them: "120" and true were read as 120 and 1
        *(
            (
                {"kind": "ModelResponded", "v": 3, "text": "", "tool_calls": [], "usage": usage},
                f"field 'usage.{name}': Input should be a valid integer",
            )
            for name, usage in (
                ("total", {"total": "120"}),
                ("prompt", {"total": 2, "prompt": True, "completion": 1}),
                ("completion", {"total": 2, "prompt": 1, "completion": 1.0}),
            )
        ),
    ],
)
def test_an_unreadable_event_names_the_problem(row, problem):
    with pytest.raises(EventFormatError, match=problem.replace("(", r"\(").replace(".", r"\.")):
        parse_event(row)


def test_every_kind_survives_the_flat_round_trip():
    assert set(SAMPLES) == {cls.kind for cls in ALL_KINDS}
    for cls in ALL_KINDS:
        event = cls(run_id="r-1", agent="coder", turn=1, task_id="T1", **SAMPLES[cls.kind])
        line = flat.dumps(event, "run-r-1", 4)
        back = flat.loads(line, 1)
        assert back.event == event
        assert (back.stream, back.version) == ("run-r-1", 4)


def test_same_as_ignores_only_id_and_timestamp():
    a = ToolReturned(tool="x", result=1)
    b = ToolReturned(tool="x", result=1)
    assert a.id != b.id and a.same_as(b)
    assert not a.same_as(ToolReturned(tool="x", result=2))


def test_a_count_too_large_is_found_in_a_list_of_models_among_plain_items_and_none_in_plain_lists():
    """integer_problem passes a list of plain numbers and strings whole (a quick look at its
    items' types) and still walks one that holds a model: the count past MAX_INT in the fourth
    item is named by its place."""
    from pydantic import BaseModel

    from runtime.events import integer_problem
    from runtime.events.base import MAX_INT

    class Piece(BaseModel):
        n: int

    class Holder(BaseModel):
        plain: list[int | str]
        mixed: list[Piece | int | str]

    many = [*range(10_000), *(str(i) for i in range(10_000))]
    assert integer_problem(Holder(plain=many, mixed=[1, "a", Piece(n=MAX_INT)])) is None
    found = integer_problem(Holder(plain=[], mixed=[1, "a", Piece(n=1), Piece(n=MAX_INT + 1)]))
    assert found == f"field 'mixed.3.n': {MAX_INT + 1} is more than a run can count"


# A line of an older version carrying a field only a newer one has: a v1 EffectStarted with a
# fence (`lease`, `epoch`) read as a v2 fenced by it, where v1 never recorded one, so the effect
# reconciler left the effect to a "performer" the file named. The upcast drops what the line's
# version did not have (events.HAD); a field no version has is still refused.
@pytest.mark.parametrize(
    "row, unrecorded",
    [
        (
            {
                "kind": "EffectStarted",
                "v": 1,
                "key": "fx-1",
                "effect_type": "refund",
                "target": "order:o-1",
                "request_hash": "0" * 32,
                "intent_id": "ticket-1",
                "lease": "lease-r-live",
                "epoch": 7,
            },
            {"lease": None, "epoch": None, "intent_id": "ticket-1"},
        ),
        (
            {
                "kind": "LeaseGranted",
                "v": 1,
                "resource": "x",
                "holder": "w",
                "expires": 1.0,
                "at_version": 4,
                "attempt": 9,
            },
            {"at_version": None, "attempt": 0, "expires": 1.0},
        ),
        (
            {
                "kind": "LeaseReleased",
                "v": 1,
                "resource": "x",
                "holder": "w",
                "epoch": 3,
                "outcome": "stepped",
                "attempt": 2,
                "retry_after": 5.0,
            },
            {"epoch": None, "outcome": "", "attempt": 0, "retry_after": None},
        ),
        (
            {
                "kind": "LeaseReleased",
                "v": 2,
                "resource": "x",
                "holder": "w",
                "epoch": 3,
                "retry_after": 5.0,
            },
            {"epoch": 3, "retry_after": None},
        ),
        (
            {"kind": "ModelResponded", "usage": 5, "text": "hi", "served": {"model": "m"}},
            {"text": None, "tool_calls": None, "served": None},
        ),
        (
            {"kind": "ToolReturned", "tool": "t", "result": 1, "call_id": "c1", "attempt": 3},
            {"call_id": None, "attempt": 1, "result": 1},
        ),
        (
            {"kind": "TeamStarted", "team": "x", "scenario": "s", "task": "t", "asked": {"a": 1}},
            {"asked": None, "team": "x"},
        ),
    ],
    ids=lambda p: p.get("kind", "") if "kind" in p else "",
)
def test_an_old_line_is_read_without_the_fields_its_version_never_had(row, unrecorded):
    event = parse_event(row)
    assert {name: getattr(event, name) for name in unrecorded} == unrecorded


def test_a_field_no_version_has_is_refused_on_an_old_line_as_on_any():
    row = {"kind": "LeaseGranted", "v": 1, "resource": "x", "holder": "w", "expires": 1.0}
    with pytest.raises(EventFormatError, match="unexpected field 'colour'"):
        parse_event({**row, "colour": "red"})


def test_every_upcast_names_the_fields_of_the_version_it_reads():
    # Without its entry an old line keeps every field a newer version added; a name there that
    # is not a field of the kind (a typo) would drop a field the old version did have.
    assert HAD.keys() == UPCASTERS.keys()
    for (kind, _), had in HAD.items():
        assert had <= BY_KIND[kind].model_fields.keys(), kind


def test_every_kind_a_trace_push_journals_is_a_push_kind():
    # An import leaves these out and refuses them elsewhere (journal_store/admission.py): a new
    # push kind left off the list would be imported as the file's word.
    from runtime.events import Event
    from runtime.events import traces as pushes

    defined = {
        value
        for value in vars(pushes).values()
        if isinstance(value, type)
        and issubclass(value, Event)
        and value.__module__ == pushes.__name__
    }
    assert defined and defined == set(pushes.PUSH_KINDS)
