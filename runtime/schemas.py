"""The JSON schemas of tools' arguments: the validator each gets, and how arguments are checked
against it.

Every validator resolves a `$ref` inside its own schema only (and in the metaschemas jsonschema
carries): its registry is empty, so no reference is ever fetched. jsonschema's default fetched
any http(s) or file URL it met, in the agent loop's thread and with no timeout: an MCP server's
schema could have the worker read a file on its disk and quote it back in a refusal (into the
journal and to the model), call an address inside its network, or hang the loop on one that
never answers.

A schema that cannot be checked against the arguments (a reference that does not resolve, one
that recurses without end) is `Unusable`: the tool refuses the call saying so
(tools.Tool.validate), where the exception went up through the agent loop, which catches only
a tool's failures, and stopped the run at its ToolDispatched on every replay too.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import referencing
import referencing.exceptions
from jsonschema.exceptions import ValidationError, best_match

from runtime.events import shown

# Whatever references a schema holds resolve in it or in the metaschemas jsonschema bundles
# (it adds those to every registry), and nowhere else: nothing is retrieved.
NO_RETRIEVAL: referencing.Registry[Any] = referencing.Registry()


class Unusable(Exception):
    """A schema that cannot be checked against these arguments; the message says why."""


def relevant_error(validator: Any, args: Any) -> ValidationError | None:
    """The error jsonschema's best_match picks among the arguments' errors, None when they are
    valid; Unusable when the schema cannot be checked against them."""
    try:
        error: ValidationError | None = best_match(validator.iter_errors(args))
    except referencing.exceptions.Unresolvable as exc:
        raise Unusable(
            f"it refers to {shown(exc.ref)}, which is not in it (no reference is fetched)"
        ) from None
    except RecursionError:
        raise Unusable("it refers to itself without end") from None
    return error


# Checking a schema and building its validator costs milliseconds, and a harness may build
# its tools again at every step (a cold step of a long run builds each once more), so each
# distinct schema is checked and built once per process. A schema is data (never mutated
# after a Tool holds it), keyed by its JSON.
_VALIDATORS: dict[str, Any] = {}
_VALIDATORS_MAX = 1024


def validator_for(parameters: dict[str, Any]) -> Any:
    """The checked validator of a tool's JSON schema, built once per distinct schema."""
    key = json.dumps(parameters, sort_keys=True, default=repr)
    found = _VALIDATORS.get(key)
    if found is None:
        jsonschema.Draft202012Validator.check_schema(parameters)
        found = jsonschema.Draft202012Validator(parameters, registry=NO_RETRIEVAL)
        if len(_VALIDATORS) >= _VALIDATORS_MAX:
            _VALIDATORS.clear()  # tools made up on the fly (MCP servers) must not grow it forever
        _VALIDATORS[key] = found
    return found
