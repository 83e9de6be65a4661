"""A journal row as the journal's reads select it (`SELECT`'s columns) and decode it into a
Recorded: validated whole, straight from its JSON text where its version is current. Apart
from journal.py's DjangoJournal, which appends and reads the rows, because the projectors,
the export and the bench decode rows they select themselves."""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import Any, NamedTuple

from pydantic import ValidationError

from runtime import flat
from runtime.events import BY_KIND, EventFormatError, parse_event
from runtime.journal import Recorded

SELECT = (
    "SELECT position, id, stream, version, run_id, kind, v, agent, task_id, turn, data, t "
    "FROM journal_event"
)

Row = tuple[Any, ...]


class Unreadable(NamedTuple):
    """A row no event model reads (rewritten in the table, or of a kind or version this
    Minutes does not know), with from_row's error naming it."""

    row: Row
    error: EventFormatError

    @property
    def position(self) -> int:
        return int(self.row[0])


class Readings(NamedTuple):
    """A select's rows read one at a time: the records, and the rows no event model reads, each
    in the select's order."""

    records: list[Recorded]
    unreadable: list[Unreadable]


def hex_id(value: Any) -> str:
    return value if isinstance(value, str) else str(value.hex)


def row_envelope(row: Row) -> str:
    _, event_id, _, _, run_id, _, _, agent, task_id, turn, _, t = row
    return flat.envelope(hex_id(event_id), t, run_id, agent, turn, task_id)


# kind -> (its version, the validator of its JSON text): one look-up a row where from_row
# made three calls (the class, model_validate_json, its validator).
CURRENT: dict[str, tuple[int, Callable[[str], Any]]] = {
    kind: (cls.v, cls.__pydantic_validator__.validate_json) for kind, cls in BY_KIND.items()
}


def from_row(row: Row) -> Recorded:
    """A Recorded from a SELECT row. Current versions are validated straight from JSON text
    (the envelope's columns spliced before the payload's fields); older ones go through the
    upcasters. Every row is validated: a row changed behind the journal's back is refused
    here (EventFormatError naming its position), never folded."""
    position, event_id, stream, version, run_id, kind, v, agent, task_id, turn, data, t = row
    current = CURRENT.get(kind)
    try:
        if current is not None and v == current[0]:
            # flat.envelope and flat.splice, inline: this runs for every row a projector reads
            head = '{"id":"' + (event_id if type(event_id) is str else event_id.hex)
            head += '","t":' + repr(float(t)) + ',"run_id":' + encode_basestring(run_id)
            if agent is not None:
                head += ',"agent":' + encode_basestring(agent)
            if turn is not None:
                head += ',"turn":' + str(turn)
            if task_id is not None:
                head += ',"task_id":' + encode_basestring(task_id)
            event = current[1](head + ("," + data[1:] if len(data) > 2 else "}"))
        else:
            body = json.loads(flat.splice(row_envelope(row), data))
            event = parse_event({"kind": kind, "v": v, **body})
    except (ValidationError, ValueError) as exc:
        # ValueError: parse_event's EventFormatError (a kind or version no model here reads)
        # and text that is no JSON; it carried no row, so a letter said "an event of its
        # journal" and nobody knew which row to mend.
        error = EventFormatError(f"the event at position {position} ({kind}) is unreadable: {exc}")
        error.row = (position, stream, version, kind)
        raise error from None
    return Recorded(stream, version, position, event)


def flat_line(row: Row) -> str:
    """The event as export writes it, built from the row's text without parsing it; the same
    bytes flat.dumps writes for the event."""
    _, _, stream, version, _, kind, v, _, _, _, data, _ = row
    return flat.line(kind, v, row_envelope(row), data, stream, version)
