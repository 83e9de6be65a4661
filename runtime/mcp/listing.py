"""What the client takes from an MCP server's tool listing, and what it refuses.

A server is another program, perhaps a hostile one, and what it lists goes into every model
request a worker makes (each tool's name, description and schema), into the run's journal
(the triage team's ToolsListed, one line) and into the check of every call's arguments. One
that listed 20,000 tools with a kilobyte of description each put 23 MB of tools into every
request. So:

- past a limit (more than MAX_TOOLS tools, a description longer than MAX_DESCRIPTION_CHARS, a
  schema larger than MAX_SCHEMA_BYTES or nested deeper than MAX_SCHEMA_DEPTH, more than
  MAX_LISTING_BYTES in all), or with two tools whose names are one on the wire, the listing is
  refused: the server is degraded, the reason naming the limit or both tools, and none of its
  tools is offered;
- a tool whose name is none a model can call (tool_names.TOOL_NAME), or whose schema cannot be
  checked safely (runtime.schemas.problem: not a JSON Schema, a reference that does not resolve
  inside it, a check that would never end, a pattern with no linear-time run), is left out, said
  in the server's health (`ServerHealth.left_out`) and the log; the others are offered.

All of it is decided when a surface starts, never in a replay: a replay builds its tools from
the listing its journal recorded, so a recorded run replays as it ran whatever these limits
become.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from mcp.types import Tool as McpTool

from runtime import flat, schemas
from runtime.events import shown
from runtime.tool_names import NAME_CHARS, TOOL_NAME, wire_name

# As many tools as the OpenAI-compatible API takes in one request: a server that lists more
# could not have them all offered to a model anyway.
MAX_TOOLS = 128
MAX_DESCRIPTION_CHARS = 4_096
MAX_SCHEMA_BYTES = 32 * 1024  # as JSON in UTF-8
# Levels of objects and arrays: a ToolsListed holds each schema a few levels into its journal
# line, which may nest 64 (events.LINE_DEPTH); a deeper one could not be journalled at all.
MAX_SCHEMA_DEPTH = 32
# Names, descriptions and schemas together: a few servers' fit one journal line that imports
# again (MINUTES_IMPORT_MAX_LINE_BYTES, 1 MiB by default) and a model request of a sane size.
MAX_LISTING_BYTES = 256 * 1024


@dataclass
class Listing:
    """A server's listing as the client takes it: the tools offered, those left out (qualified
    name -> why), and why the whole listing was refused (None when it was not)."""

    offered: list[McpTool] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)
    refused: str | None = None


def taken(server: str, tools: Sequence[McpTool]) -> Listing:
    """What of `server`'s listing is offered (see the module's docstring)."""
    if why := _past_a_limit(tools):
        return Listing(refused=f"its tool listing was refused: {why}")
    if why := _collision(server, tools):
        return Listing(refused=f"its tool listing was refused: {why}")
    listing = Listing()
    for tool in tools:
        name = f"{server}.{tool.name}"
        if not TOOL_NAME.fullmatch(name):
            # escaped and cut short: a name that is no tool's may hold anything
            escaped = repr(name[:NAME_CHARS])[1:-1] + ("..." if len(name) > NAME_CHARS else "")
            listing.left_out[escaped] = (
                "its name is none a model can call (letters, digits, _, - and ., at most 128 "
                "with the server's name)"
            )
        elif why := schemas.problem(tool.input_schema):
            listing.left_out[name] = f"its input schema cannot be used: {why}"
        else:
            listing.offered.append(tool)
    return listing


def _past_a_limit(tools: Sequence[McpTool]) -> str | None:
    if len(tools) > MAX_TOOLS:
        return f"it lists more than {MAX_TOOLS} tools (MAX_TOOLS)"
    total = 0
    for tool in tools:
        description = tool.description or ""
        if len(description) > MAX_DESCRIPTION_CHARS:
            return (
                f"the description of {shown(tool.name)} has {len(description):,} characters, "
                f"more than {MAX_DESCRIPTION_CHARS:,} (MAX_DESCRIPTION_CHARS)"
            )
        if flat.deeper_than(tool.input_schema, MAX_SCHEMA_DEPTH):
            return (
                f"the input schema of {shown(tool.name)} nests deeper than {MAX_SCHEMA_DEPTH} "
                "levels (MAX_SCHEMA_DEPTH)"
            )
        size = _bytes(tool.input_schema)
        if size > MAX_SCHEMA_BYTES:
            return (
                f"the input schema of {shown(tool.name)} is {size:,} bytes, more than "
                f"{MAX_SCHEMA_BYTES:,} (MAX_SCHEMA_BYTES)"
            )
        total += size + _bytes(tool.name) + _bytes(description)
    if total > MAX_LISTING_BYTES:
        return (
            f"its tools' names, descriptions and schemas are {total:,} bytes, more than "
            f"{MAX_LISTING_BYTES:,} (MAX_LISTING_BYTES)"
        )
    return None


def _collision(server: str, tools: Sequence[McpTool]) -> str | None:
    """Two tools named alike on the wire, where `.` travels as `__` (tool_names.wire_name):
    `a.b` and `a__b` are both `server__a__b`, and a model's call to it reached whichever the
    reply's names were mapped back to last."""
    seen: dict[str, str] = {}
    for tool in tools:
        wired = wire_name(f"{server}.{tool.name}")
        if (other := seen.get(wired)) is not None:
            return (
                f"tools {shown(other)} and {shown(tool.name)} are both {shown(wired)} to a model, "
                "which could not say which it calls"
            )
        seen[wired] = tool.name
    return None


def _bytes(value: object) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))
