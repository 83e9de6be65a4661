"""The JSON schemas of tools' arguments: the validator each gets, how arguments are checked
against it, and what a schema from outside the project must be before a tool is built on it.

Every validator resolves a `$ref` inside its own schema only (and in the metaschemas jsonschema
carries): its registry is empty, so no reference is ever fetched. jsonschema's default fetched
any http(s) or file URL it met, in the agent loop's thread and with no timeout: a server's
schema could have the worker read a file on its disk and quote it back in a refusal (into the
journal and to the model), call an address inside its network, or hang the loop on one that
never answers.

A schema from outside the project (`outside=True`: an MCP server's) is hostile: arguments are
checked against it with `pattern` and `patternProperties` run on the regex engine pydantic-core
carries (Rust's `regex` crate, no backtracking: linear in the text), where Python's `re` takes
hours for `^(a+)+$` against forty characters, in the agent loop's thread; and the check gives up
after MAX_STEPS keyword evaluations (a schema whose references fan out asks for 2**40). Both
count work, not time, so a replay decides as the run did. A replay builds its tools from the
schemas its journal recorded, which an import may have brought: these bounds hold there too.

A schema that cannot be checked against the arguments (a reference that does not resolve,
endless recursion, too many steps, a pattern the linear engine cannot run) is `Unusable`: the
tool refuses the call saying so (tools.Tool.validate), rather than raising through the loop.
Such a schema is refused before that, when its server lists it (`problem`, called by
runtime/mcp/listing.py): it must be a valid JSON Schema whose references all resolve inside it,
none of whose chains of references and in-place applicators (allOf, not, if, ...) comes back
where it started without consuming any of the arguments or has one value checked against more
than MAX_IN_PLACE schemas, and whose patterns the linear-time engine runs.

The engines differ where JSON Schema says Python's `re` is wrong: `$` matches at the very end
only (ECMA 262), not also before a final newline; a pattern only `re` takes (look-around, a
back-reference) is refused. The project's own tools keep `re`, so their runs replay unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

import jsonschema
import referencing
import referencing.exceptions
import referencing.jsonschema
from jsonschema.exceptions import ValidationError, best_match
from pydantic_core import SchemaError, SchemaValidator, core_schema

from runtime import flat
from runtime.events import shown

# Keyword evaluations one check of a call's arguments may take against a schema from outside: a
# few dozen for most calls, 60,000 for a list of 10,000 objects of two fields (a quarter of a
# second). One whose references fan out (allOf: [{$ref: d1}, {$ref: d1}] at each of forty
# levels) asks for 2**40, each some 30 microseconds: this many take about three seconds.
MAX_STEPS = 100_000
# Schemas one value of the arguments may be checked against in place (through references and
# allOf, anyOf, oneOf, not, if, then, else, dependentSchemas), counted as a check visits them.
MAX_IN_PLACE = 1_000

# Whatever references a schema holds resolve in it or in the metaschemas jsonschema bundles
# (it adds those to every registry), and nowhere else: nothing is retrieved.
NO_RETRIEVAL: referencing.Registry[Any] = referencing.Registry()


class Unusable(Exception):
    """A schema that cannot be checked against these arguments; the message says why."""


class _TooCostly(Exception):
    pass


class _Steps:
    def __init__(self, left: int) -> None:
        self.left = left


_steps: ContextVar[_Steps | None] = ContextVar("schema_steps", default=None)


def relevant_error(validator: Any, args: Any) -> ValidationError | None:
    """The error jsonschema's best_match picks among the arguments' errors, None when they are
    valid; Unusable when the schema cannot be checked against them."""
    token = _steps.set(_Steps(MAX_STEPS))
    try:
        error: ValidationError | None = best_match(validator.iter_errors(args))
    except referencing.exceptions.Unresolvable as exc:
        raise Unusable(
            f"it refers to {shown(exc.ref)}, which is not in it (no reference is fetched)"
        ) from None
    except RecursionError:
        raise Unusable("it refers to itself without end") from None
    except _TooCostly:
        raise Unusable(f"checking them took more than {MAX_STEPS:,} steps") from None
    finally:
        _steps.reset(token)
    return error


# --- patterns on a linear-time engine ----------------------------------------------------------

_MATCHERS: dict[str, SchemaValidator] = {}
_MATCHERS_MAX = 4096


def linear_problem(pattern: str) -> str | None:
    """Why the linear-time engine cannot run this pattern (its own words), None if it can."""
    try:
        _matcher(pattern)
    except SchemaError as exc:
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
        return lines[-1] if lines else "it does not compile"
    return None


def searches(pattern: str, text: str) -> bool:
    """Whether the pattern matches somewhere in the text, as `re.search` says but in JSON
    Schema's dialect (see the module's docstring), in time linear in the text."""
    try:
        matcher = _matcher(pattern)
    except SchemaError:
        raise Unusable(
            f"its pattern {shown(pattern)} cannot run on a linear-time engine: "
            f"{linear_problem(pattern)}"
        ) from None
    # Rust's strings hold no lone surrogate: one (a model's reply cut inside an emoji) is
    # matched as U+FFFD, as the journal keeps it.
    return matcher.isinstance_python(flat.mended(text))


def _matcher(pattern: str) -> SchemaValidator:
    found = _MATCHERS.get(pattern)
    if found is None:
        found = SchemaValidator(core_schema.str_schema(pattern=pattern, regex_engine="rust-regex"))
        if len(_MATCHERS) >= _MATCHERS_MAX:
            _MATCHERS.clear()  # patterns of servers' schemas, made up as they please
        _MATCHERS[pattern] = found
    return found


# jsonschema's keywords that run a regex, with `searches` for its `re.search` and the same
# messages (a refusal is worked out again on every replay and must read as it was recorded).


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not searches(pattern, instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if searches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(
    validator: Any, additional: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extras = {
        key
        for key in instance
        if key not in properties and not any(searches(p, key) for p in patterns)
    }
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            listed = ", ".join(repr(each) for each in sorted(patterns))
            yield ValidationError(f"{joined} {verb} not match any of the regexes: {listed}")
        else:
            ordered = sorted(extras, key=str)
            verb = "was" if len(ordered) == 1 else "were"
            joined = ", ".join(repr(extra) for extra in ordered)
            yield ValidationError(
                f"Additional properties are not allowed ({joined} {verb} unexpected)"
            )


Keyword = Callable[[Any, Any, Any, Any], Any]


def _counted(keyword: Keyword) -> Keyword:
    def counted(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        steps = _steps.get()
        if steps is not None:
            steps.left -= 1
            if steps.left < 0:
                raise _TooCostly
        return keyword(validator, value, instance, schema)

    return counted


_BASE = jsonschema.Draft202012Validator
_OUTSIDE = jsonschema.validators.extend(  # type: ignore[no-untyped-call]  # untyped in the stubs
    _BASE,
    {
        name: _counted(keyword)
        for name, keyword in {
            **_BASE.VALIDATORS,
            "pattern": _pattern,
            "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties,
        }.items()
    },
)


# Checking a schema and building its validator costs milliseconds, and a harness may build
# its tools again at every step (a cold step of a long run builds each once more), so each
# distinct schema is checked and built once per process. A schema is data (never mutated
# after a Tool holds it), keyed by its JSON.
_VALIDATORS: dict[tuple[bool, str], Any] = {}
_VALIDATORS_MAX = 1024


def validator_for(parameters: dict[str, Any], outside: bool = False) -> Any:
    """The checked validator of a tool's JSON schema, built once per distinct schema; a schema
    from `outside` the project gets the one with linear patterns and counted steps."""
    key = (outside, json.dumps(parameters, sort_keys=True, default=repr))
    found = _VALIDATORS.get(key)
    if found is None:
        _BASE.check_schema(parameters)
        found = (_OUTSIDE if outside else _BASE)(parameters, registry=NO_RETRIEVAL)
        if len(_VALIDATORS) >= _VALIDATORS_MAX:
            _VALIDATORS.clear()  # tools made up on the fly (MCP servers) must not grow it forever
        _VALIDATORS[key] = found
    return found


# --- a schema from outside, when its server lists it ----------------------------------------

# Where a schema holds schemas (draft 2020-12), by whether each applies to the same value as
# the schema holding it (in place) or to a part of it, and by shape.
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_LIST = ("allOf", "anyOf", "oneOf")
_IN_PLACE_MAP = ("dependentSchemas",)
_BELOW_ONE = (
    "additionalProperties",
    "propertyNames",
    "items",
    "contains",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
)
_BELOW_LIST = ("prefixItems",)
_BELOW_MAP = ("properties", "patternProperties", "$defs", "definitions")
_REFS = ("$ref", "$dynamicRef")


def problem(schema: Any) -> str | None:
    """Why a schema from outside cannot be taken (see the module's docstring), None if it can.
    For a schema within the listing's limits of size and depth (runtime/mcp/listing.py):
    jsonschema's own check of it recurses."""
    if not isinstance(schema, dict):
        return f"it is {type(schema).__name__}, not a JSON object"
    if why := _invalid(schema, "#"):
        return why
    return _walk(schema)


def _invalid(schema: dict[str, Any], pointer: str) -> str | None:
    try:
        _BASE.check_schema(schema)
    except jsonschema.SchemaError as exc:
        where = "/".join([pointer, *(str(p) for p in exc.absolute_path)])
        said = exc.message if len(exc.message) <= 300 else exc.message[:300] + "..."
        return f"it is not a valid JSON Schema: at {shown(where)}: {said}"
    return None


class _Graph:
    """The schemas of one root that checking a value may apply, by id: where each is (a JSON
    pointer reaching it), and the schemas it applies to the same value (in place)."""

    def __init__(self) -> None:
        self.nodes: dict[int, dict[str, Any]] = {}
        self.where: dict[int, str] = {}
        self.in_place: dict[int, list[dict[str, Any]]] = {}


def _walk(root: dict[str, Any]) -> str | None:
    """Every schema of `root` and every one its references reach: each reference resolved, a
    schema reached by one checked as a schema (the root's check does not look there), each
    pattern tried on the linear engine; then the in-place applications (_in_place)."""
    spec = referencing.jsonschema.DRAFT202012
    graph = _Graph()
    # (schema, its resolver, where it is, whether it was reached by a reference). Not even the
    # metaschemas jsonschema bundles resolve here, as they would in a check: a tool's arguments
    # have no business being checked against them.
    todo: list[tuple[dict[str, Any], Any, str, bool]] = [
        (root, NO_RETRIEVAL.resolver_with_root(spec.create_resource(root)), "#", False)
    ]
    pattern_properties = unevaluated = False
    while todo:
        node, resolver, pointer, referred = todo.pop()
        if id(node) in graph.nodes:
            continue
        if referred and (why := _invalid(node, pointer)):
            return why
        graph.nodes[id(node)] = node
        graph.where[id(node)] = pointer
        edges = graph.in_place[id(node)] = []
        for keyword in _REFS:
            ref = node.get(keyword)
            if not isinstance(ref, str):
                continue
            try:
                resolved = resolver.lookup(ref)
            except referencing.exceptions.Unresolvable:
                return (
                    f"{shown(pointer + '/' + keyword)} refers to {shown(ref)}, which is not "
                    "in the schema (no reference is fetched)"
                )
            if isinstance(resolved.contents, dict):
                todo.append((resolved.contents, resolved.resolver, ref, True))
                edges.append(resolved.contents)
            elif not isinstance(resolved.contents, bool):
                return (
                    f"{shown(pointer + '/' + keyword)} refers to {shown(ref)}, which is "
                    f"{type(resolved.contents).__name__}, no schema"
                )
        for at, child, applied in _children(node, pointer):
            if isinstance(child, dict):
                todo.append(
                    (child, resolver.in_subresource(spec.create_resource(child)), at, False)
                )
                if applied:
                    edges.append(child)
        patterns = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
        for pattern in [*patterns, *(node.get("patternProperties") or {})]:
            if why := linear_problem(pattern):
                return (
                    f"at {shown(pointer)}: the pattern {shown(pattern)} cannot run on a "
                    f"linear-time engine: {why}"
                )
        pattern_properties |= "patternProperties" in node
        unevaluated |= "unevaluatedProperties" in node
    if pattern_properties and unevaluated:
        # jsonschema works out which properties were evaluated with Python's re, on names the
        # agent chose, and takes no other engine.
        return "it has both patternProperties and unevaluatedProperties"
    return _in_place(graph)


def _children(node: dict[str, Any], pointer: str) -> Iterator[tuple[str, Any, bool]]:
    """(where, subschema, whether it applies in place) for each subschema `node` holds."""
    for keyword in (*_IN_PLACE_ONE, *_BELOW_ONE):
        if keyword in node:
            yield f"{pointer}/{keyword}", node[keyword], keyword in _IN_PLACE_ONE
    for keyword in (*_IN_PLACE_LIST, *_BELOW_LIST):
        for i, child in enumerate(node.get(keyword) or ()):
            yield f"{pointer}/{keyword}/{i}", child, keyword in _IN_PLACE_LIST
    for keyword in (*_IN_PLACE_MAP, *_BELOW_MAP):
        for name, child in (node.get(keyword) or {}).items():
            yield f"{pointer}/{keyword}/{name}", child, keyword in _IN_PLACE_MAP


def _in_place(graph: _Graph) -> str | None:
    """A cycle of in-place applications, or a schema that has one value checked against more
    than MAX_IN_PLACE schemas (each counted as often as a check visits it), said; None when
    there is neither."""
    visits: dict[int, int] = {}  # id -> the schemas checked on one value from it, itself too
    for start in graph.nodes:
        if start in visits:
            continue
        on_path: set[int] = set()
        stack: list[tuple[int, int]] = [(start, 0)]
        while stack:
            key, i = stack.pop()
            children = graph.in_place[key]
            on_path.add(key)
            if i < len(children):
                stack.append((key, i + 1))
                child = id(children[i])
                if child in on_path:
                    return (
                        f"{shown(graph.where[key])} comes back to {shown(graph.where[child])} "
                        "without consuming any of the arguments: checking them would never end"
                    )
                if child not in visits:
                    stack.append((child, 0))
                continue
            on_path.discard(key)
            visits[key] = 1 + sum(visits[id(child)] for child in children)
            if visits[key] > MAX_IN_PLACE:
                return (
                    f"{shown(graph.where[key])} has one value checked against more than "
                    f"{MAX_IN_PLACE:,} schemas (through references and allOf, anyOf, oneOf, "
                    "not, if, then, else, dependentSchemas)"
                )
    return None
