"""Arguments checked against a schema from outside the project (an MCP server's) take bounded
work: its patterns run on a linear-time engine, and the check stops after MAX_STEPS keywords;
refusals read as jsonschema's own, and the project's own tools keep Python's re."""

from __future__ import annotations

import pytest

from runtime import schemas
from runtime.model import ToolCall
from runtime.tools import InvalidArguments, Tool, Toolbox

# Python's re backtracks through every way of splitting the a's: hours for forty of them.
CATASTROPHIC = "^(a+)+$"


def refusal(parameters: dict, outside: bool = True, **args) -> str | None:
    tool = Tool("h.t", "A server's tool.", parameters, lambda **a: a, outside=outside)
    try:
        Toolbox([tool]).check(ToolCall(id="c1", name="h.t", args=args), "worker")
    except InvalidArguments as exc:
        return str(exc)
    return None


def test_a_catastrophic_pattern_is_checked_against_a_long_text_at_once():
    parameters = {
        "type": "object",
        "properties": {"q": {"type": "string", "pattern": CATASTROPHIC}},
    }
    said = refusal(parameters, q="a" * 100_000 + "!")
    assert said is not None and said.endswith(f"does not match {CATASTROPHIC!r}")
    assert refusal(parameters, q="a" * 100_000) is None


def test_a_catastrophic_pattern_of_property_names_is_checked_at_once():
    parameters = {
        "type": "object",
        "patternProperties": {CATASTROPHIC: {"type": "integer"}},
        "additionalProperties": False,
    }
    name = "a" * 1_000 + "!"
    assert refusal(parameters, **{name: 1}) == (
        f"arguments: {name!r} does not match any of the regexes: {CATASTROPHIC!r}"
    )
    assert refusal(parameters, aaa=1) is None
    assert refusal(parameters, aaa="x") == "aaa: 'x' is not of type 'integer'"


@pytest.mark.parametrize(
    "parameters, args",
    [
        ({"properties": {"id": {"type": "string", "pattern": "^T[0-9]+$"}}}, {"id": "X1"}),
        ({"properties": {"a": {}}, "additionalProperties": False}, {"a": 1, "b": 2, "c": 3}),
        ({"patternProperties": {"^x": {}}, "additionalProperties": False}, {"y": 1, "z": 2}),
        ({"patternProperties": {"^x": {}}, "additionalProperties": {"type": "string"}}, {"y": 1}),
        ({"propertyNames": {"pattern": "^[a-z]+$"}}, {"Upper": 1}),
    ],
)
def test_a_refusal_reads_as_jsonschemas_own(parameters, args):
    """A refusal is worked out again on every replay: a journal recorded with jsonschema's re
    must read the same."""
    ours = refusal(parameters, outside=False, **args)
    assert ours is not None
    assert refusal(parameters, outside=True, **args) == ours


def test_a_pattern_the_linear_engine_cannot_run_refuses_the_call():
    parameters = {"properties": {"q": {"type": "string", "pattern": "^(?!admin)"}}}
    said = refusal(parameters, q="user")
    assert said is not None and "cannot run on a linear-time engine" in said
    assert "look-around" in said


def test_the_projects_own_tools_keep_pythons_re():
    """Their recorded runs replay as they ran: `$` before a final newline matches in re, and
    not in ECMA 262, which JSON Schema and the linear engine follow."""
    parameters = {"properties": {"id": {"type": "string", "pattern": "^T[0-9]+$"}}}
    assert refusal(parameters, outside=False, id="T1\n") is None
    assert refusal(parameters, outside=True, id="T1\n") is not None


def test_a_schema_whose_references_fan_out_stops_after_its_steps(monkeypatch):
    # Each level checks the next twice: 2**40 checks of one value, hours of work.
    defs = {
        f"d{i}": {"allOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
        for i in range(40)
    }
    defs["d40"] = {"type": "string"}
    parameters = {"properties": {"q": {"$ref": "#/$defs/d0"}}, "$defs": defs}
    monkeypatch.setattr(schemas, "MAX_STEPS", 1_000)
    said = refusal(parameters, q=1)
    assert (
        said
        == "h.t's schema cannot check these arguments: checking them took more than 1,000 steps"
    )
    assert refusal({"properties": {"q": {"type": "string"}}}, q=1) == "q: 1 is not of type 'string'"
