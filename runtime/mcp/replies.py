"""What a server's answers become on the client's side: its whole tool listing, a call's result
as the model sees it, and a one-line account of a failure (looking through anyio's exception
groups). Plain functions, kept apart from the surface's machinery in `client`."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, TypeVar

from mcp import ClientSession, MCPError
from mcp.types import CallToolResult, PaginatedRequestParams, TextContent
from mcp.types import Tool as McpTool
from pydantic import ValidationError

from runtime.mcp import listing

T = TypeVar("T")

QUOTED_CHARS = 120  # how much of an unreadable line a reason quotes


async def list_tools(session: ClientSession) -> list[McpTool]:
    """All of a server's tools, following pagination; once past listing.MAX_TOOLS, no more
    pages are asked for (the listing is refused anyway)."""
    page = await session.list_tools()
    tools = list(page.tools)
    while page.next_cursor is not None and len(tools) <= listing.MAX_TOOLS:
        page = await session.list_tools(params=PaginatedRequestParams(cursor=page.next_cursor))
        tools.extend(page.tools)
    return tools


def text(result: CallToolResult) -> str:
    parts = [
        block.text if isinstance(block, TextContent) else f"[{block.type} content omitted]"
        for block in result.content
    ]
    return "\n".join(parts).strip()


def value(result: CallToolResult) -> Any:
    """A result as the model should see it: the structured value if the server sent one."""
    if result.structured_content is not None:
        return result.structured_content
    return text(result)


async def unwrapped(future: asyncio.Future[T]) -> T:
    """Await a future, re-raising the first real exception inside anyio's exception groups."""
    try:
        return await future
    except BaseExceptionGroup as group:
        raise leaf(group) from group


def leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> str:
    """A one-line account of an exception, looking through anyio's exception groups."""
    exc = leaf(exc)
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, MCPError):
        return exc.message
    said = str(exc)
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


def unreadable(exc: Exception) -> str:
    """Why the SDK could not read a line of a server's stdout (`exc`, what it passed on), with
    the line quoted, escaped and cut short: it may hold anything (terminal controls, a secret
    the server printed), and the reason is logged and journalled."""
    if not isinstance(exc, ValidationError):
        return f"its stdout could not be read: {describe(exc)}"
    found = exc.errors(include_url=False)
    said: object = found[0].get("input", "") if found else ""
    if found and found[0]["type"] == "json_invalid":
        what = "not JSON"
    else:
        what = "no JSON-RPC message"
        with contextlib.suppress(TypeError, ValueError):
            said = json.dumps(said)
    line = said if isinstance(said, str) else str(said)
    quoted = repr(line[:QUOTED_CHARS])
    if len(line) > QUOTED_CHARS:
        quoted += f" (cut short; {len(line):,} characters)"
    return f"it wrote a line on stdout that is {what}: {quoted}"
