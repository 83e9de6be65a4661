"""A bound on one line of what an MCP server writes on stdout: each line is one JSON-RPC message.

The SDK's stdio client gathers a line as text until its newline, however long: a server that
wrote 200 MiB without one took the worker from 74 to 152 MB in the 10 s the call waited (and
further while the connection lived), and copied its gathered text again for every 64 KiB
read, holding the surface's one event loop (every server's calls) busy all that while. Its
only hook on the bytes is the text encoding it decodes them with, so each connection is
given an encoding of its own (`Watch.encoding`): UTF-8, which counts the bytes since the last
newline and, past MAX_LINE_BYTES, decodes nothing more and tells the surface
(`Watch.over`), which degrades the server naming the limit and ends its connection.

A tool's result is kept only up to runtime.tools.MAX_RESULT_BYTES (512 KiB) and a listing up
to runtime.mcp.listing.MAX_LISTING_BYTES (256 KiB); a line may be a few times either, as JSON
escapes some characters in six bytes, and those checks then refuse it with their own words.
"""

from __future__ import annotations

import codecs
import itertools
import threading
from collections.abc import Callable

MAX_LINE_BYTES = 4 * 1024 * 1024

_PREFIX = "minutes_mcp_lines_"  # as codecs.lookup normalises a name: lower case, no '-'
_watches: dict[str, Watch] = {}
_numbers = itertools.count()
_lock = threading.Lock()


class Watch:
    """One connection's bound: `encoding` to start the server with; `over(limit)` is called
    once, on the event loop's thread, when a line passes it. `forget()` at the connection's
    end lets go of the callback (codecs keeps what it looked up for the process's life)."""

    def __init__(self, over: Callable[[int], None], limit: int = MAX_LINE_BYTES) -> None:
        self.limit = limit
        self._over: Callable[[int], None] | None = over
        with _lock:
            self.encoding = f"{_PREFIX}{next(_numbers)}"
            _watches[self.encoding] = self

    def passed(self) -> None:
        over, self._over = self._over, None
        if over is not None:
            over(self.limit)

    def forget(self) -> None:
        self._over = None
        with _lock:
            _watches.pop(self.encoding, None)


def _decoder(watch: Watch) -> type[codecs.IncrementalDecoder]:
    class Decoder(codecs.IncrementalDecoder):
        def __init__(self, errors: str = "strict") -> None:
            super().__init__(errors)
            self._utf8 = codecs.getincrementaldecoder("utf-8")(errors)
            self._run = 0  # bytes since the last newline
            self._passed = False

        def decode(self, data: bytes, final: bool = False) -> str:  # type: ignore[override]
            if self._passed:
                return ""  # the connection is being ended: nothing more is gathered
            start = 0
            while (end := data.find(b"\n", start)) >= 0:
                if self._run + end - start > watch.limit:
                    return self._pass()
                self._run, start = 0, end + 1
            self._run += len(data) - start
            if self._run > watch.limit:
                return self._pass()
            return self._utf8.decode(data, final)

        def _pass(self) -> str:
            self._passed = True
            watch.passed()
            return ""

        def reset(self) -> None:
            self._utf8.reset()
            self._run = 0

    return Decoder


def _search(name: str) -> codecs.CodecInfo | None:
    with _lock:
        watch = _watches.get(name)
    if watch is None:
        return None
    utf8 = codecs.lookup("utf-8")
    return codecs.CodecInfo(
        utf8.encode,
        utf8.decode,
        incrementalencoder=utf8.incrementalencoder,
        incrementaldecoder=_decoder(watch),
        name=name,
    )


codecs.register(_search)
