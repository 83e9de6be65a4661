"""Tools from MCP servers over stdio, as one namespaced surface of runtime `Tool`s.

`McpSurface(servers)` starts every server as a subprocess, lists its tools and offers them as
`server.tool` (`orders.lookup_order`), so two servers may both have a `search`, a call's
destination is plain from its name, and a per-worker allowlist is a `Toolbox` allow list
(`surface.toolbox(allow=["orders.*", "kb.search"])`).

The agent loop is synchronous and the SDK is async (anyio). The surface runs a private asyncio
event loop in a daemon thread. Each server's connection lives inside ONE long-lived task on that
loop, because anyio cancel scopes (inside `stdio_client` and `ClientSession`) must be entered
and left by the same task; the connection cannot be opened by one call and closed by another.
Sync methods hand coroutines to the loop with `run_coroutine_threadsafe` and wait with a
timeout, so no caller ever blocks for longer than it asked.

A call never raises through the loop: a dead server, an MCP error result or a timeout becomes a
`McpFailure` (a `ToolFailure`) raised from the tool's function, which `runtime.tools.execute`
turns into an observation naming the server and the tool.

A server's listing is taken as `runtime.mcp.listing` says: past a limit (tools, sizes, depth) or
with two tools named alike on the wire it is refused and the server degraded, offering nothing;
a tool with a name no model can call or a schema that cannot be checked safely is left out,
and said in `health()` (`ServerHealth.left_out`).

Degraded servers. A server is degraded after a failed start, a refused listing, a failed ping, a
closed connection (its process is gone) or `max_failures` consecutive failed calls; `degraded()`
says which and why, for a planner to route around. Its tools STAY LISTED (but for a refused
listing's: there are none) and their calls fail fast with "server X is degraded: reason". Hiding
them instead would change a worker's tool list in the middle of its run: the model would then
meet `UnknownTool` for a tool it was shown a turn ago, which explains nothing, and a `Toolbox`
is a fixed snapshot anyway. A clear refusal is an observation the model can act on (and the
journal records why). Degradation is sticky for the
life of the surface: a server that answered pings while failing every call (the `policy`
server) must not flip back to healthy on the next ping.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, TypeVar

import anyio
from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import (
    CONNECTION_CLOSED,
    REQUEST_TIMEOUT,
)
from mcp.types import Tool as McpTool

from runtime import children
from runtime.mcp import lines, listing, process, replies
from runtime.mcp.server import (
    McpFailure,
    McpServer,
    McpTimeout,
    McpToolError,
    ServerDegraded,
    ServerHealth,
    ServerUnreachable,
)
from runtime.mcp.stderr import StderrTail
from runtime.tools import Tool, Toolbox

log = logging.getLogger(__name__)

T = TypeVar("T")

CALL_TIMEOUT = 30.0
START_TIMEOUT = 20.0  # a Python server importing the SDK takes ~0.7 s; a loaded CI box, more
PING_TIMEOUT = 5.0
MAX_FAILURES = 3
# The SDK bounds its own shutdown (close stdin, 2 s grace, SIGTERM, 2 s, SIGKILL); this is the
# outer bound on all of it, with room to spare.
CLOSE_TIMEOUT = 10.0
# How much longer the calling thread waits than the request timeout the SDK enforces, so the
# SDK's own, clearer timeout normally fires first.
GRACE = 2.0


@dataclass
class _Link:
    """One server's connection and its bookkeeping.

    `session`, `tools`, `task` and `stop` belong to the loop thread; the counters and `degraded`
    are shared with calling threads and guarded by the surface's lock.
    """

    server: McpServer
    stderr: StderrTail
    session: ClientSession | None = None
    tools: list[McpTool] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)  # qualified tool name -> why
    task: asyncio.Task[None] | None = None
    stop: asyncio.Event | None = None
    handshake: anyio.CancelScope | None = None  # while the handshake and listing are awaited
    owner: process.Owner | None = None  # its process (runtime/mcp/process.py)
    degraded: str | None = None
    failures: int = 0
    calls: int = 0


class McpSurface:
    """Every configured MCP server's tools as one namespaced set of runtime `Tool`s."""

    def __init__(
        self,
        servers: Iterable[McpServer],
        *,
        call_timeout: float = CALL_TIMEOUT,
        start_timeout: float = START_TIMEOUT,
        ping_timeout: float = PING_TIMEOUT,
        max_failures: int = MAX_FAILURES,
        shared: bool = False,
    ) -> None:
        servers = list(servers)
        names = [s.name for s in servers]
        if len(set(names)) != len(names):
            raise ValueError(f"server names must be unique: {names}")
        self.call_timeout = call_timeout
        self.start_timeout = start_timeout
        self.ping_timeout = ping_timeout
        self.max_failures = max_failures
        self._lock = threading.Lock()
        self._closed = False
        # The servers are children of the holding current here (runtime/children.py): a lost
        # lease ends them. They are started on the loop's thread, which is in none. A surface
        # `shared` by a worker's runs (services/specialists.py) is no one step's: one run's
        # lost lease killed every run's servers, and they stayed counted under the step that
        # happened to start them after it was over.
        self.shared = shared
        self._holding = None if shared else children.holding()
        self._links = {s.name: _Link(s, stderr=StderrTail(s.name)) for s in servers}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="mcp-surface", daemon=True
        )
        self._thread.start()
        self._start_or_degrade()
        self._tools = self._build_tools()

    # -- the sync API ----------------------------------------------------------------------

    def tools(self) -> list[Tool]:
        """Every server's tools, qualified `server.tool`, degraded servers' included."""
        return list(self._tools)

    def toolbox(self, allow: Iterable[str] | None = None) -> Toolbox:
        """A Toolbox over this surface; `allow` takes exact names and `server.*` patterns."""
        if allow is None:
            return Toolbox(self._tools)
        return Toolbox(self._tools, allow=self.expand(allow))

    def expand(self, allow: Iterable[str]) -> set[str]:
        """Allowlist entries as tool names. An exact name stays even if no such tool exists:
        the Toolbox then answers UnknownTool, which is the truth."""
        names: set[str] = set()
        for entry in allow:
            if entry.endswith(".*") and "*" not in entry[:-2]:
                prefix = entry[:-1]
                names.update(t.name for t in self._tools if t.name.startswith(prefix))
            elif "*" in entry:
                raise ValueError(f"only exact names and 'server.*' are allowed, not {entry!r}")
            else:
                names.add(entry)
        return names

    def call(self, name: str, args: dict[str, Any]) -> Any:
        """Call `server.tool` with already validated arguments; failures raise `McpFailure`."""
        server, _, tool = name.partition(".")
        link = self._links.get(server)
        if link is None:
            raise McpToolError(f"{name}: there is no MCP server named {server!r}")
        session = self._session_for(link, name)
        with self._lock:
            link.calls += 1
        try:
            result = self._submit(
                session.call_tool(tool, args, read_timeout_seconds=self.call_timeout),
                self.call_timeout + GRACE,
            )
        except Exception as exc:
            raise self._call_failed(link, name, exc) from exc
        if result.is_error:
            message = f"{name} returned an error: {replies.text(result) or '(no message)'}"
            self._count_failure(link, message)
            raise McpToolError(message)
        with self._lock:
            link.failures = 0
        return replies.value(result)

    def health(self) -> dict[str, ServerHealth]:
        """Ping every server not yet degraded, degrade those that fail, and report on all."""
        live = [link for link in self._links.values() if link.degraded is None]
        if live and not self._closed:
            try:
                reasons = self._submit(self._ping_all(live), self.ping_timeout + GRACE)
            except TimeoutError:
                reasons = [f"no answer to ping within {self.ping_timeout:g} s"] * len(live)
            for link, reason in zip(live, reasons, strict=True):
                if reason is not None:
                    self._degrade(link, reason)
        return {name: self._health_of(link) for name, link in self._links.items()}

    def degraded(self) -> dict[str, str]:
        """{server: reason} for every degraded server, as of the last call or health check."""
        with self._lock:
            return {
                name: link.degraded
                for name, link in self._links.items()
                if link.degraded is not None
            }

    def close(self) -> None:
        """Stop every server process and the event loop. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        try:
            if self._loop.is_running():
                self._submit(self._stop_all(), CLOSE_TIMEOUT + GRACE)
        except Exception:
            log.exception("stopping the MCP servers did not finish cleanly")
        finally:
            self._stop_loop()
            for link in self._links.values():
                link.stderr.release()  # a server that never got to start

    def __enter__(self) -> McpSurface:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _start_or_degrade(self) -> None:
        """Start every server; one that cannot start is degraded, never a raise from here."""
        try:
            self._submit(self._start_all(), self.start_timeout + GRACE)
        except TimeoutError:  # each start is bounded; this only backs those bounds up
            failed = [link for link in self._links.values() if link.session is None]
            for link in failed:
                self._degrade(link, f"could not start within {self.start_timeout:g} s")
            with contextlib.suppress(TimeoutError):  # a loop that stuck: the kill was sent
                self._submit(self._abandon(failed), CLOSE_TIMEOUT + GRACE)
        except BaseException:
            self.close()
            raise

    # -- calls and health, caller side ------------------------------------------------------

    def _session_for(self, link: _Link, name: str) -> ClientSession:
        """The live session to call `name` on, or the McpFailure saying why there is none."""
        if self._closed:
            raise ServerUnreachable(f"{name}: the MCP surface is closed")
        with self._lock:
            reason, session = link.degraded, link.session
        if reason is not None:
            raise ServerDegraded(f"{name}: server {link.server.name!r} is degraded: {reason}")
        if session is None:
            raise ServerUnreachable(f"{name}: server {link.server.name!r} is not connected")
        return session

    def _call_failed(self, link: _Link, name: str, exc: Exception) -> McpFailure:
        """Classify an exception from a call and update the server's health accordingly."""
        server = link.server.name
        if isinstance(exc, MCPError) and exc.code == CONNECTION_CLOSED:
            self._degrade(
                link,
                "connection closed (the server process is gone)"
                + self._stderr_tail(link, settle=1.0),
            )
            # the first reason: ours, when we ended the connection (a line past its bound)
            reason = link.degraded
            return ServerUnreachable(f"{name}: server {server!r} is unreachable: {reason}")
        if isinstance(exc, TimeoutError) or (
            isinstance(exc, MCPError) and exc.code == REQUEST_TIMEOUT
        ):
            message = f"{name}: server {server!r} gave no answer within {self.call_timeout:g} s"
            self._count_failure(link, message)
            return McpTimeout(message)
        message = f"{name} failed: {replies.describe(exc)}"
        self._count_failure(link, message)
        return McpToolError(message)

    def _count_failure(self, link: _Link, message: str) -> None:
        with self._lock:
            link.failures += 1
            failures = link.failures
        if failures >= self.max_failures:
            self._degrade(link, f"{failures} consecutive failed calls, the last: {message}")

    def _degrade(self, link: _Link, reason: str) -> None:
        """Mark a server degraded; the first reason stays, as it is usually the cause."""
        with self._lock:
            if link.degraded is not None:
                return
            link.degraded = reason
        log.warning("MCP server %r is degraded: %s", link.server.name, reason)

    def _line_too_long(self, link: _Link, limit: int) -> None:
        """A line of the server's stdout passed its bound (runtime/mcp/lines.py)."""
        self._broken(
            link,
            f"it wrote a line on stdout longer than {limit:,} bytes (lines.MAX_LINE_BYTES); "
            "its connection was ended",
        )

    async def _unreadable(self, link: _Link, message: object) -> None:
        """What the session passes on beside the server's notifications: a line of its stdout
        that the SDK could not read as a JSON-RPC message (it logged it and went on, and the
        call waiting for an answer waited out its timeout). Every line of a server's stdout is
        one message, so one that is not breaks the protocol: whatever else it wrote is noise
        too, and its answer may never come."""
        if isinstance(message, Exception):
            self._broken(link, replies.unreadable(message) + "; its connection was ended")

    def _broken(self, link: _Link, reason: str) -> None:
        """Degrade the server and end its connection, so that a call waiting on it (or its
        handshake) fails now, naming why."""
        self._degrade(link, reason)
        if link.handshake is not None:
            link.handshake.cancel()
        if link.stop is not None:
            link.stop.set()

    def _health_of(self, link: _Link) -> ServerHealth:
        with self._lock:
            return ServerHealth(
                name=link.server.name,
                reason=link.degraded,
                tools=tuple(f"{link.server.name}.{t.name}" for t in link.tools),
                calls=link.calls,
                consecutive_failures=link.failures,
                left_out=dict(link.left_out),
            )

    def _build_tools(self) -> list[Tool]:
        """Each server's listing as runtime Tools, as much of it as `listing.taken` offers."""
        tools: list[Tool] = []
        for link in self._links.values():
            taken = listing.taken(link.server.name, link.tools)
            link.tools, link.left_out = taken.offered, taken.left_out
            if taken.refused is not None:
                self._degrade(link, taken.refused)
            for name, why in taken.left_out.items():
                log.warning("MCP tool %s is left out: %s", name, why)
            tools += [self._runtime_tool(link.server, spec) for spec in link.tools]
        return tools

    def _runtime_tool(self, server: McpServer, spec: McpTool) -> Tool:
        name = f"{server.name}.{spec.name}"

        def run(**args: Any) -> Any:
            return self.call(name, args)

        return Tool(
            name=name,
            description=spec.description or f"{spec.name} from the {server.name} server",
            parameters=dict(spec.input_schema),
            fn=run,
            # The surface enforces its own timeout and cancels the request on the loop;
            # execute()'s watchdog thread would only add a thread per call.
            timeout=None,
            retry_safe=server.read_only,
            outside=True,
        )

    def _stderr_tail(
        self, link: _Link, lines: int = 5, chars: int = 600, settle: float = 0.0
    ) -> str:
        """The end of the server's stderr, for a reason that says more than 'it died'; `settle`
        as StderrTail.text's."""
        text = link.stderr.text(settle)
        tail = " | ".join(line for line in text.strip().splitlines()[-lines:] if line.strip())
        return f"; stderr: {tail[-chars:]}" if tail else ""

    # -- the loop thread ---------------------------------------------------------------------

    def _submit(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run a coroutine on the private loop and wait for it, at most `timeout` seconds."""
        try:
            future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        except RuntimeError:  # the loop is closed
            coro.close()
            raise ServerUnreachable("the MCP surface is closed") from None
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    async def _start_all(self) -> None:
        await asyncio.gather(*(self._start(link) for link in self._links.values()))

    async def _start(self, link: _Link) -> None:
        """Open one server's connection in its own task; degrade the server if it fails."""
        link.stop = asyncio.Event()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        link.task = asyncio.create_task(self._hold(link, ready), name=f"mcp-{link.server.name}")
        try:
            await replies.unwrapped(ready)
        except TimeoutError:
            why = f"no MCP handshake within {self.start_timeout:g} s"
            self._degrade(link, f"could not start: {why}{self._stderr_tail(link)}")
        except MCPError as exc:
            why = exc.message
            if exc.code == CONNECTION_CLOSED:
                why = "the process exited during the MCP handshake"
            self._degrade(link, f"could not start: {why}{self._stderr_tail(link, settle=1.0)}")
        except Exception as exc:
            why = replies.describe(exc)
            self._degrade(link, f"could not start: {why}{self._stderr_tail(link)}")

    async def _hold(self, link: _Link, ready: asyncio.Future[None]) -> None:
        """The life of one connection: open, initialize, list tools, wait for stop, close."""
        server = link.server
        watch = lines.Watch(lambda limit: self._line_too_long(link, limit))
        params = StdioServerParameters(
            command=server.command[0],
            args=list(server.command[1:]),
            env=dict(server.env),
            cwd=server.cwd,
            encoding=watch.encoding,
        )
        children.adopt(self._holding)  # this task's context alone
        link.owner = owner = process.Owner(f"MCP server {server.name!r}", counted=not self.shared)
        process.owner.set(owner)
        try:
            async with stdio_client(params, errlog=link.stderr.writer) as (read, write):
                link.stderr.release()  # the process has its own end: the pipe ends with it
                try:
                    await self._serve(link, read, write, ready)
                except BaseException:
                    # A start that failed ends the process now, so that it is gone (and
                    # reaped, by the SDK's shutdown) when the surface says so, not 4 s later.
                    if not ready.done():
                        owner.kill()
                    raise
        except Exception as exc:
            if not ready.done():
                ready.set_exception(exc)
            else:
                self._degrade(link, f"connection failed: {replies.describe(exc)}")
        finally:
            link.session = None
            link.handshake = None
            watch.forget()
            link.stderr.release()  # if it could not be started
            if owner.release():
                self._degrade(link, f"its process was ended: {children.WHY}")
            if not ready.done():  # cancelled before it was ready
                ready.set_exception(RuntimeError("the connection was cancelled while starting"))

    async def _serve(self, link: _Link, read: Any, write: Any, ready: asyncio.Future[None]) -> None:
        """Initialize, list tools, say it is ready, and wait for the stop."""
        # No session-wide read timeout: it bounded the handshake by the call timeout too, so
        # a server slow to import on a busy machine was degraded at 5 s where start_timeout
        # gives it 20. Each request carries its own bound instead (the handshake and listing
        # here, a call's in call_tool, a ping's in _ping).
        handler = lambda message: self._unreadable(link, message)  # noqa: E731
        async with ClientSession(read, write, message_handler=handler) as session:
            with anyio.fail_after(self.start_timeout):
                with anyio.CancelScope() as link.handshake:
                    await session.initialize()
                    link.tools = await replies.list_tools(session)
            link.handshake = None
            if link.degraded is not None:  # a line past its bound, or unreadable, ended it
                raise RuntimeError(link.degraded)
            link.session = session
            ready.set_result(None)
            await self._until_stopped(link)

    async def _until_stopped(self, link: _Link) -> None:
        """Wait for the stop. A process that ends meanwhile is no longer counted among the
        holding's children (its pid may soon be another's), and one that a lost lease ended
        degrades the server saying so. Its end is awaited (asyncio's child watcher sets it),
        not looked for on a timer: a connection costs nothing while its server is idle."""
        assert link.stop is not None and link.owner is not None
        started = link.owner.process
        if started is not None:  # None: started as the SDK starts them (process.HOOKED)
            async with anyio.create_task_group() as group:
                group.start_soon(_cancel_when_ended, started, group.cancel_scope)
                await link.stop.wait()
                group.cancel_scope.cancel()
            if link.stop.is_set():
                return
        if link.owner.release():
            self._degrade(link, f"its process was ended: {children.WHY}")
        await link.stop.wait()

    async def _ping_all(self, links: list[_Link]) -> list[str | None]:
        return list(await asyncio.gather(*(self._ping(link) for link in links)))

    async def _ping(self, link: _Link) -> str | None:
        """None if the server answered a ping, else why not."""
        session = link.session
        if session is None:
            return "not connected"
        try:
            with anyio.fail_after(self.ping_timeout):
                await session.send_ping()
        except TimeoutError:
            return f"no answer to ping within {self.ping_timeout:g} s"
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                return "ping failed: connection closed (the server process is gone)"
            return f"ping failed: {exc.message}"
        except Exception as exc:
            return f"ping failed: {replies.describe(exc)}"
        return None

    async def _abandon(self, links: list[_Link]) -> None:
        """End the starts of `links` now, their processes killed, and wait for them to be
        reaped (the SDK's shutdown waits for that)."""
        for link in links:
            if link.handshake is not None:
                link.handshake.cancel()
            if link.owner is not None:
                link.owner.kill()
        tasks = [link.task for link in links if link.task is not None]
        if tasks:
            await asyncio.wait(tasks, timeout=CLOSE_TIMEOUT)

    async def _stop_all(self) -> None:
        for link in self._links.values():
            if link.handshake is not None:  # a start still under way: it fails, and is ended
                link.handshake.cancel()
            if link.stop is not None:
                link.stop.set()
        tasks = [link.task for link in self._links.values() if link.task is not None]
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=CLOSE_TIMEOUT)
        for task in pending:  # the SDK bounds its shutdown, so this is a last resort
            log.warning("MCP connection %s did not stop in time; cancelling it", task.get_name())
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=1.0)

    def _stop_loop(self) -> None:
        if self._loop.is_closed():
            return
        # Async generators are finalised on the loop's own thread: the caller's thread may be
        # running a loop of its own (a browser driver, an async framework), where
        # run_until_complete would refuse.
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._loop.shutdown_asyncgens(), self._loop).result(
                timeout=CLOSE_TIMEOUT
            )
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=CLOSE_TIMEOUT)
        if self._thread.is_alive():
            log.warning("the MCP event loop thread did not stop; leaving it (it is a daemon)")
            return
        self._loop.close()


async def _cancel_when_ended(started: Any, scope: anyio.CancelScope) -> None:
    await started.wait()
    scope.cancel()
