"""The flat JSONL form of an event: one JSON object per line.

`{"v":..,"t":..,"kind":..,<fields>}` plus the envelope (`id`, `stream`, `version`, `run_id`,
`agent`, `turn`, `task_id`). The same form is written by JsonlJournal, by export, and read by
import. Lines of the reference runtime carry no `v` (they are version 1), no `id`, `stream` or
`version`; the reader fills those in.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from runtime.events import Event, EventFormatError, event_fields, parse_event


@dataclass(frozen=True, slots=True)
class FlatLine:
    """A parsed line: the event, and where the line says it belongs (None when it does not)."""

    event: Event
    stream: str | None
    version: int | None


def dumps(event: Event, stream: str, version: int) -> str:
    body = event_fields(event)
    body["stream"] = stream
    body["version"] = version
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def loads(text: str | bytes, line_no: int, source: str = "") -> FlatLine:
    """Parse one line. Raises EventFormatError naming the problem (the caller names the line).

    `line_no` and `source` only matter for lines without an `id` (see `from_object`).
    """
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EventFormatError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except UnicodeDecodeError:
        raise EventFormatError("not UTF-8 text") from None
    return from_object(data, lambda: fallback_id(text, line_no, source))


def fallback_id(text: str | bytes, line_no: int, source: str = "") -> str:
    """An id for a line that has none, stable for the same line at the same place.

    Reference journals carry no ids. Deriving one from the source, the line number and the
    line's bytes means importing the same file twice finds the same ids (and adds nothing the
    second time), while two identical lines still get two ids.
    """
    raw = text if isinstance(text, bytes) else text.encode()
    digest = hashlib.sha256(f"{source}\0{line_no}\0".encode() + raw).digest()
    return uuid.UUID(bytes=digest[:16], version=5).hex


def from_object(data: Any, missing_id: Callable[[], str]) -> FlatLine:
    if not isinstance(data, dict):
        raise EventFormatError(f"expected a JSON object, got {type(data).__name__}")
    data = dict(data)
    stream = data.pop("stream", None)
    version = data.pop("version", None)
    data.pop("position", None)
    if stream is not None and not isinstance(stream, str):
        raise EventFormatError("field 'stream' must be a string")
    if version is not None and (not isinstance(version, int) or isinstance(version, bool)):
        raise EventFormatError("field 'version' must be an integer")
    if "id" not in data:
        data["id"] = missing_id()
    return FlatLine(parse_event(data), stream, version)
