"""The command line's off switch for a flight: a `<journal>.stop` file (`interrupt` writes it,
another terminal may too), or Ctrl-C once, which stops at the next turn boundary; Ctrl-C
twice quits at once, the journal left where it stops for `resume` to go on from."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any

from runtime.stops import StopRequest
from runtime.written import NAME_MAX, reason_refusal


class QuitAtOnce(KeyboardInterrupt):
    """Ctrl-C pressed again while stopping: the flight is left where its journal stops, which
    `resume` goes on from. Said in a line (run_command), where it was a traceback."""

    def __init__(self, run_id: str, journal_path: Path) -> None:
        super().__init__(
            f"run {run_id}: interrupted at once (Ctrl-C twice); it rests where {journal_path} "
            f"ends: `python -m runtime resume {journal_path} --run {run_id}` goes on from there"
        )


class StopSignal:
    """The operator's off switch: a `<journal>.stop` file, or Ctrl-C once (twice quits hard)."""

    def __init__(self, journal_path: Path, run_id: str) -> None:
        self.journal_path, self.run_id = journal_path, run_id
        self.path = stop_path(journal_path)
        self.pressed = False

    def __call__(self) -> StopRequest | None:
        if self.pressed:
            return StopRequest(by=operator(), reason="Ctrl-C")
        try:
            data = json.loads(self.path.read_text() or "{}")
        except FileNotFoundError:
            return None
        except (ValueError, RecursionError):  # half written, or not ours: no name, no reason
            data = {}
        if not isinstance(data, dict):
            data = {}
        by, reason = str(data.get("by") or "").strip(), str(data.get("reason") or "").strip()
        # Another terminal may write the file: what it says is journalled only where the
        # command's own checks would have let it through.
        if not by or len(by) > NAME_MAX or not by.isprintable():
            by = operator()
        if why := reason_refusal(reason):
            reason = f"(the stop file's reason was not kept: {why})"
        return StopRequest(by=by, reason=reason)

    def install(self) -> Any:
        """Take over Ctrl-C; returns the previous handler for `signal.signal` to restore."""

        def on_sigint(signum: int, frame: FrameType | None) -> None:
            if self.pressed:
                raise QuitAtOnce(self.run_id, self.journal_path)
            self.pressed = True
            print(
                "stopping at the next turn boundary (Ctrl-C again to quit at once)", file=sys.stderr
            )

        return signal.signal(signal.SIGINT, on_sigint)

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)


def stop_path(journal_path: Path) -> Path:
    return journal_path.with_name(journal_path.name + ".stop")


def operator() -> str:
    return os.environ.get("USER") or os.environ.get("LOGNAME") or "operator"
