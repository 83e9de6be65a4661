"""The flat JSONL form of an event: one JSON object per line.

`{"v":..,"t":..,"kind":..,<fields>}` plus the envelope (`id`, `stream`, `version`, `run_id`,
`agent`, `turn`, `task_id`). The same form is written by JsonlJournal, by export, and read by
import. Lines of the reference runtime carry no `v` (they are version 1), no `id`, `stream` or
`version`; the reader fills those in.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from json.encoder import encode_basestring
from typing import Any

from runtime.events import Event, EventFormatError, parse_event, payload_json


@dataclass(frozen=True, slots=True)
class FlatLine:
    """A parsed line: the event, and where the line says it belongs (None when it does not)."""

    event: Event
    stream: str | None
    version: int | None


def text(value: Any) -> str:
    """JSON text for a value; strings (the envelope's ids and names) take the C fast path."""
    if isinstance(value, str):
        return encode_basestring(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def envelope(
    event_id: str, t: float, run_id: str, agent: str | None, turn: int | None, task_id: str | None
) -> str:
    """The envelope's fields as JSON text without braces; agent, turn, task_id only when set."""
    # encode_basestring, not text(): these are strings, and every read of the journal builds
    # an envelope per event.
    head = '"id":"' + event_id + '","t":' + repr(float(t)) + ',"run_id":'
    head += encode_basestring(run_id)
    if agent is not None:
        head += ',"agent":' + encode_basestring(agent)
    if turn is not None:
        head += ',"turn":' + str(turn)
    if task_id is not None:
        head += ',"task_id":' + encode_basestring(task_id)
    return head


def splice(head: str, payload: str, tail: str = "") -> str:
    """`{head, <payload's fields>, tail}` without parsing `payload` (a JSON object's text)."""
    inner = payload[1:-1]
    return "{" + head + ("," + inner if inner else "") + tail + "}"


def line(kind: str, v: int, head: str, payload: str, stream: str, version: int) -> str:
    """A flat line: kind, v, the envelope, the payload, then stream and version."""
    start = '"kind":' + text(kind) + ',"v":' + str(v) + "," + head
    return splice(start, payload, ',"stream":' + text(stream) + ',"version":' + str(version))


def dumps(event: Event, stream: str, version: int) -> str:
    head = envelope(event.id, event.t, event.run_id, event.agent, event.turn, event.task_id)
    return line(event.kind, event.v, head, payload_json(event), stream, version)


def loads(
    text: str | bytes,
    line_no: int,
    source: str = "",
    max_depth: int | None = None,
    keys_once: bool = False,
) -> FlatLine:
    """Parse one line. Raises EventFormatError naming the problem (the caller names the line).

    `line_no` and `source` only matter for lines without an `id` (see `from_object`). With
    `max_depth`, objects and arrays nested deeper than that are refused (an import's bound:
    the database and the pages read payloads back with parsers that have their own limits).
    With `keys_once`, an object naming a key twice is refused (an import's too: JSON leaves
    it to each reader, and Python keeps the last where others keep the first; it costs about
    6 µs a line, which the journals this runtime wrote itself need not pay).
    """
    try:
        decoded = (
            text.decode(json.detect_encoding(text), "surrogatepass")
            if isinstance(text, bytes)
            else text
        )
        if decoded.startswith("\ufeff"):
            raise json.JSONDecodeError("Unexpected UTF-8 BOM", decoded, 0)
        data = (_ONCE if keys_once else _DECODER).decode(decoded)
    except json.JSONDecodeError as exc:
        # json's messages may end in "at" ("Unterminated string starting at"): say it once.
        what = exc.msg.removesuffix(" at")
        raise EventFormatError(f"not JSON: {what} at column {exc.colno}") from None
    except UnicodeDecodeError:
        raise EventFormatError("not UTF-8 text") from None
    except RecursionError:
        # json's decoder recurses once per level: a line of ten thousand "[" lands here.
        raise EventFormatError("nested too deeply for JSON to read") from None
    except EventFormatError:
        raise  # NaN or Infinity, said by _not_a_number (a ValueError too: not the one below)
    except KeyTwice as exc:
        raise EventFormatError(f"the key {exc.key!r} is given twice in one object") from None
    except ValueError:
        raise EventFormatError(f"not JSON we can read: {NUMBER_TOO_LONG}") from None
    if max_depth is not None and _openings(text) > max_depth and deeper_than(data, max_depth):
        raise EventFormatError(f"nested deeper than the limit of {max_depth} levels")
    if _SURROGATE_HINT.search(decoded) and (field := field_holding(data, _SURROGATE)):
        raise EventFormatError(
            f"field {field} holds a lone UTF-16 surrogate, which is not Unicode text"
        )
    return from_object(data, lambda: fallback_id(text, line_no, source))


def _not_a_number(name: str) -> Any:
    raise EventFormatError(f"not JSON: {name} is not a number JSON allows")


# What json raises a plain ValueError for (not a JSONDecodeError, so a caller that catches only
# that one let it through as a 500): a whole number of more digits than Python converts.
NUMBER_TOO_LONG = f"a whole number longer than {sys.get_int_max_str_digits():,} digits"


class KeyTwice(ValueError):
    """A JSON object names a key twice (`key`)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def keys_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are each given once, for json's object_pairs_hook. JSON leaves a
    key given twice to the reader: Python keeps the last, other readers the first, so what
    one tool showed of a line or a body is not what another acted on."""
    found = dict(pairs)
    if len(found) < len(pairs):
        raise KeyTwice(next(k for k, n in Counter(k for k, _ in pairs).items() if n > 1))
    return found


# One decoder for every line (json.loads with options would build one per call), refusing the
# NaN and Infinity that Python's json accepts and JSON does not.
_DECODER = json.JSONDecoder(parse_constant=_not_a_number)
_ONCE = json.JSONDecoder(parse_constant=_not_a_number, object_pairs_hook=keys_once)


# What may leave half a UTF-16 pair in a string: an escape of one (json reads "\ud800" and
# keeps it), or one decoded as such (the bytes of UTF-8-encoded surrogates, which json's own
# decoding of bytes lets through). Most lines hold neither and need no walk.
_SURROGATE_HINT = re.compile(r"\\u[dD][89a-fA-F]|[\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def mended(value: Any) -> Any:
    """`value` (parsed JSON) with each lone UTF-16 surrogate in its strings and keys replaced by
    U+FFFD. Python's json reads the escape of half a pair ("\\ud83d") and keeps it, and no
    event holding it can be written (UTF-8 has no such character): a model's reply cut in the
    middle of an emoji is kept this way, its text otherwise as it came. Raises RecursionError
    past Python's depth, as json's reading would have."""
    if isinstance(value, str):
        return value if value.isascii() else _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [mended(item) for item in value]
    if isinstance(value, dict):
        return {mended(key): mended(item) for key, item in value.items()}
    return value


def holds_surrogates(value: Any) -> bool:
    """Whether parsed JSON holds a lone surrogate in a string or key, at any depth."""
    return field_holding({"": value}, _SURROGATE) is not None


def may_hold_surrogates(text: str | bytes) -> bool:
    """Whether JSON text may read back with a lone surrogate (a cheap look at its escapes, and
    at bytes that are one in UTF-8's form)."""
    if isinstance(text, bytes):
        if json.detect_encoding(text) not in ("utf-8", "utf-8-sig"):
            return True  # UTF-16 or -32, which json reads too: half a pair is no pattern here
        return _SURROGATE_BYTES.search(text) is not None
    return _SURROGATE_HINT.search(text) is not None


# The escape of half a UTF-16 pair, or the three bytes UTF-8's scheme would give one (ED A0 80
# to ED BF BF): json reads bytes with "surrogatepass", so those came through as a lone half.
_SURROGATE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")


def field_holding(value: Any, pattern: re.Pattern[str]) -> str | None:
    """The top-level field (as repr names it) of the first string or key, at any depth, that
    `pattern` finds something in, or None: what an import's line (a lone surrogate, which
    UTF-8 cannot store) or an API body (a NUL, which PostgreSQL's text cannot) is refused for,
    naming where."""
    if not isinstance(value, dict):
        return None
    for key, item in value.items():
        stack: list[Any] = [key, item]
        while stack:
            found = stack.pop()
            if isinstance(found, str):
                if pattern.search(found):
                    return ascii(key)
            elif isinstance(found, dict):
                stack.extend(found.keys())
                stack.extend(found.values())
            elif isinstance(found, list):
                stack.extend(found)
    return None


def _openings(text: str | bytes) -> int:
    """An upper bound of the nesting (brackets in strings count too): most lines need no walk."""
    if isinstance(text, bytes):
        return text.count(b"[") + text.count(b"{")
    return text.count("[") + text.count("{")


def deeper_than(value: Any, limit: int) -> bool:
    """True when objects and arrays nest more than `limit` levels (counted without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth + 1 > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


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
