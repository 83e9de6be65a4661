"""An MCP server's stderr, of which only the end is kept.

The server writes into a pipe that a thread of ours drains, keeping the last TAIL_BYTES: the
end is where a dying process says why, and the surface quotes it in the reason a server is
degraded. A server may write as much as it likes. Its stderr was a temporary file kept for the
life of the surface and read back whole to quote five lines: 400 MiB of it took the worker from
70 MiB to 1.27 GB, and filled /tmp (often memory) as much. Draining also keeps a server that
logs a lot from blocking on a full pipe.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import TextIO

TAIL_BYTES = 64 * 1024
_CHUNK = 64 * 1024


class StderrTail:
    """The end of one server's stderr. `writer` is what the server is started with (the SDK's
    errlog); once it has started, `release()` closes our copy, so that the pipe ends when the
    process (and any it started that kept the pipe) is gone."""

    def __init__(self, server: str) -> None:
        read, write = os.pipe()
        self.writer: TextIO = os.fdopen(write, "w", encoding="utf-8", errors="replace")
        self._read = read
        self._lock = threading.Lock()
        self._tail = bytearray()
        self._drainer = threading.Thread(
            target=self._drain, name=f"mcp-stderr-{server}", daemon=True
        )
        self._drainer.start()

    def release(self) -> None:
        """Close our copy of the end the server writes into, once the process holds its own
        (or will never start). Safe to call twice."""
        self.writer.close()

    def text(self, settle: float = 0.0) -> str:
        """The kept end, decoded. `settle`: seconds to wait for the pipe to end first, when
        the process is known to be gone and its last words may still be in the pipe."""
        if settle > 0:
            self._drainer.join(settle)
        with self._lock:
            kept = bytes(self._tail[-TAIL_BYTES:])
        return kept.decode("utf-8", "replace")

    def _drain(self) -> None:
        try:
            while chunk := os.read(self._read, _CHUNK):
                with self._lock:
                    self._tail += chunk
                    if len(self._tail) > 2 * TAIL_BYTES:  # cut now and then, not every chunk
                        del self._tail[:-TAIL_BYTES]
        except OSError:
            pass  # the pipe is broken: nothing more will come
        finally:
            with contextlib.suppress(OSError):
                os.close(self._read)
