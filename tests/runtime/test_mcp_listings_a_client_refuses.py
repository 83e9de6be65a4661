"""What the MCP surface refuses of a server's tool listing (runtime/mcp/listing.py): past a
limit, or with two tools named alike on the wire, the server is degraded naming it and offers
nothing; a tool with a name no model can call, or a schema that cannot be checked safely, is
left out and said in the server's health, its neighbours offered."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from runtime import loop, tool_names
from runtime.budget import Budget
from runtime.journal import MemoryJournal
from runtime.mcp import listing
from runtime.mcp.client import McpSurface
from runtime.mcp.server import McpServer
from runtime.model import ScriptedClient, call
from runtime.session import Session
from teams.triage import onward

pytestmark = pytest.mark.slow

SERVER = Path(__file__).with_name("hostile_mcp_server.py")
PLAIN = {"type": "object", "properties": {"q": {"type": "string"}}}


def tool(name: str, schema: dict = PLAIN, description: str = "A tool.") -> dict:
    # The SDK takes no listing whose schemas are not of objects (none of the server's starts).
    return {"name": name, "description": description, "inputSchema": {"type": "object", **schema}}


def nested(levels: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"q": schema}}
    return schema


def fanning(levels: int) -> dict:
    defs = {
        f"d{i}": {"allOf": [{"$ref": f"#/$defs/d{i + 1}"}, {"$ref": f"#/$defs/d{i + 1}"}]}
        for i in range(levels)
    }
    defs[f"d{levels}"] = {"type": "string"}
    return {"type": "object", "properties": {"q": {"$ref": "#/$defs/d0"}}, "$defs": defs}


# Each server lists one way past a limit, or one thing left out.
LISTINGS = {
    "many": {"tools": [tool(f"t{i}") for i in range(listing.MAX_TOOLS + 1)]},
    "pager": {"tools": [tool("t")], "page": 50},  # pages for ever
    "wordy": {"tools": [tool("t", description="d" * (listing.MAX_DESCRIPTION_CHARS + 1))]},
    "deep": {"tools": [tool("t", nested(listing.MAX_SCHEMA_DEPTH))]},
    "big": {"tools": [tool("t", {"enum": ["x" * listing.MAX_SCHEMA_BYTES]})]},
    "bulky": {"tools": [tool(f"t{i}", {"enum": ["x" * 30_000]}) for i in range(10)]},
    "twins": {"tools": [tool("a.b", description="harmless"), tool("a__b", description="not")]},
    "mixed": {
        "tools": [
            tool("fine"),
            tool("has space"),
            tool("remote", {"properties": {"q": {"$ref": "http://127.0.0.1:9/x"}}}),
            tool("file", {"properties": {"q": {"$ref": "file:///etc/passwd"}}}),
            tool("itself", {"properties": {"q": {"$ref": "#/properties/q"}}}),
            tool(
                "loop",
                {
                    "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
                    "properties": {"q": {"$ref": "#/$defs/a"}},
                },
            ),
            tool("fans", fanning(20)),
            tool("nothing", {"properties": {"q": {"$ref": "#/$defs/missing"}}}),
            tool("broken", {"properties": {"q": {"type": 5}}}),
            # a place that is no schema's, which the schema's own check does not look at
            tool("aside", {"x": {"type": 5}, "properties": {"q": {"$ref": "#/x"}}}),
            tool("list", {"required": ["q"], "properties": {"q": {"$ref": "#/required"}}}),
            tool("looks", {"properties": {"q": {"type": "string", "pattern": "^(?!admin)"}}}),
            tool("both", {"patternProperties": {"^x": {}}, "unevaluatedProperties": False}),
            tool("tree", {"properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}}),
        ]
    },
}


@pytest.fixture(scope="module")
def surface(tmp_path_factory):
    where = tmp_path_factory.mktemp("listings")
    servers = []
    for name, told in LISTINGS.items():
        path = where / f"{name}.json"
        path.write_text(json.dumps(told))
        servers.append(McpServer(name, (sys.executable, str(SERVER), str(path))))
    with McpSurface(servers, call_timeout=10) as shared:
        yield shared


@pytest.mark.parametrize(
    "server, said",
    [
        ("many", f"it lists more than {listing.MAX_TOOLS} tools (MAX_TOOLS)"),
        ("pager", f"it lists more than {listing.MAX_TOOLS} tools (MAX_TOOLS)"),
        (
            "wordy",
            "the description of 't' has 4,097 characters, more than 4,096 (MAX_DESCRIPTION_CHARS)",
        ),
        ("deep", "the input schema of 't' nests deeper than 32 levels (MAX_SCHEMA_DEPTH)"),
        ("big", "more than 32,768 (MAX_SCHEMA_BYTES)"),
        ("bulky", "more than 262,144 (MAX_LISTING_BYTES)"),
        ("twins", "tools 'a.b' and 'a__b' are both 'twins__a__b' to a model"),
    ],
)
def test_a_listing_past_a_limit_is_refused_and_its_server_degraded(surface, server, said):
    reason = surface.degraded()[server]
    assert reason.startswith("its tool listing was refused: ") and said in reason
    assert not [t for t in surface.tools() if t.name.startswith(f"{server}.")]
    assert surface.health()[server].tools == ()


def test_a_tool_that_cannot_be_used_is_left_out_and_its_neighbours_offered(surface):
    assert "mixed" not in surface.degraded()
    offered = [t.name for t in surface.tools() if t.name.startswith("mixed.")]
    assert offered == ["mixed.fine", "mixed.tree"]  # a tree's recursion consumes its arguments
    left_out = surface.health()["mixed"].left_out
    assert set(left_out) == {
        "mixed.has space",
        "mixed.remote",
        "mixed.file",
        "mixed.itself",
        "mixed.loop",
        "mixed.fans",
        "mixed.nothing",
        "mixed.broken",
        "mixed.aside",
        "mixed.list",
        "mixed.looks",
        "mixed.both",
    }
    assert "none a model can call" in left_out["mixed.has space"]
    for name in ("remote", "file", "nothing"):
        assert "which is not in the schema (no reference is fetched)" in left_out[f"mixed.{name}"]
    assert "'http://127.0.0.1:9/x'" in left_out["mixed.remote"]
    for name in ("itself", "loop"):
        assert "without consuming any of the arguments" in left_out[f"mixed.{name}"]
    assert "more than 1,000 schemas" in left_out["mixed.fans"]
    assert "not a valid JSON Schema: at '#/properties/q/type'" in left_out["mixed.broken"]
    assert "not a valid JSON Schema: at '#/x/type'" in left_out["mixed.aside"]
    assert "refers to '#/required', which is list, no schema" in left_out["mixed.list"]
    assert "cannot run on a linear-time engine" in left_out["mixed.looks"]
    assert "both patternProperties and unevaluatedProperties" in left_out["mixed.both"]


def test_a_run_offered_a_listing_with_a_schema_left_out_goes_on(surface):
    """The reviewer's case: a tool whose schema refers to itself raised RecursionError out of
    the loop at the first call; left out, a call to it is an unknown tool, and the run ends."""
    script = [
        call("mixed.itself", 10, q=1),
        call("mixed.fine", 10, q="x"),
        call("done", 5, summary="ok"),
    ]
    agent = loop.Agent("w", ScriptedClient(script, "w"), surface.toolbox(allow=["mixed.*"]), "sys")
    journal = MemoryJournal()
    result = loop.run(agent, "task", Session(journal, "r-1"), Budget(10_000), task_id="T1")
    assert result.status == "done"
    returned = [e for e in (r.event for r in journal.read("run-r-1")) if e.kind == "ToolReturned"]
    assert [(e.tool, e.error.type if e.error else e.result) for e in returned[:2]] == [
        ("mixed.itself", "UnknownTool"),
        ("mixed.fine", "called fine"),
    ]


def test_a_server_name_that_could_make_two_tools_alike_on_the_wire_is_refused():
    # 'a__b' with its tool 'c', and 'a' with its tool 'b.c', would both be a__b__c
    for name in ("a__b", "a_", "_a", "a.b", "a*", ""):
        with pytest.raises(ValueError, match="a server name is letters, digits"):
            McpServer(name, ("true",))
    assert McpServer("my-kb_2", ("true",)).name == "my-kb_2"


def test_a_server_named_for_a_built_in_tools_namespace_is_refused_where_it_is_configured():
    # a server 'team' listing 'delegate' gave 'team.delegate', the hand-off's own tool
    # (teams/triage/onward.py): a call meant for one reached the other
    for name in ("team", "Team"):
        with pytest.raises(ValueError, match=rf"server name {name!r}.*team\.delegate"):
            McpServer(name, ("true",))
    assert onward.TOOL in tool_names.BUILT_IN_NAMESPACED
    assert McpServer("teams", ("true",)).name == "teams"
