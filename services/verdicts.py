"""Replays' verdicts, kept in the shared cache (settings.CACHES: the database's), so that a
second "Check replay" of a run nothing was added to is answered from the first, in whichever
web process, and after a restart too.

A verdict is kept as JSON text naming the journal it is of (the run, its newest event's
position and id) beside the report's fields, and it is read back only when it is exactly that:
text that parses, of this journal, with every field of flight.ReplayReport and no other, each
of its type. Anything else (an entry the cache cannot decode, one an older Minutes wrote with
other fields, one of another journal) is replayed again and written over: a wrong verdict
shown is worse than a replay flown twice. Nor does a cache that cannot be read or written fail
the check: it costs a replay.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from typing import Any, get_type_hints

from django.core.cache import cache
from django.db import DatabaseError

from journal_store.models import StoredEvent
from runtime.flight import ReplayReport

log = logging.getLogger(__name__)

KEPT = 24 * 3600  # seconds a verdict is kept for the same journal
# The report's fields and their types (bool, int, str), each value checked for its exact type
# (True is no count of events). A field of another type one day is never trusted, so never
# read back: the verdict is replayed every time, which a test of the cache then says.
TYPES = {f.name: get_type_hints(ReplayReport)[f.name] for f in dataclasses.fields(ReplayReport)}


def journal_of(run_id: str) -> dict[str, Any] | None:
    """What names the run's journal as it stands: the run and its newest event (position and
    id), so that an event added since, or another journal imported under the same run id, is
    another journal and replayed afresh; None for a run with no events."""
    newest = (
        StoredEvent.objects.filter(run_id=run_id)
        .order_by("-position")
        .values_list("position", "event_id")
        .first()
    )
    if newest is None:
        return None
    return {"run": run_id, "position": newest[0], "event": newest[1].hex}


def key(journal: dict[str, Any]) -> str:
    """The cache key of a journal's verdict: a digest, since a run id (an imported journal's)
    may hold what a cache key should not (spaces, any length)."""
    named = json.dumps(journal, sort_keys=True).encode()
    return "replay:" + hashlib.sha256(named).hexdigest()


def kept(journal: dict[str, Any]) -> ReplayReport | None:
    """The verdict kept for this journal, or None when there is none that can be trusted."""
    try:
        text = cache.get(key(journal))
    except Exception as exc:  # an entry the cache cannot decode: its unpickling may raise anything
        log.warning("replay verdict for run %s unreadable in the cache: %r", journal["run"], exc)
        return None
    if not isinstance(text, str):
        return None  # nothing kept, or something this module never writes
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.pop("of", None) != journal or data.keys() != TYPES.keys():
        return None
    if any(type(value) is not TYPES[name] for name, value in data.items()):
        return None
    return ReplayReport(**data)


def keep(journal: dict[str, Any], report: ReplayReport) -> None:
    """Keep the verdict for this journal (a cache that cannot take it is logged, not raised)."""
    text = json.dumps({"of": journal, **dataclasses.asdict(report)})
    try:
        cache.set(key(journal), text, KEPT)
    except DatabaseError as exc:
        log.warning("replay verdict for run %s not kept: %s", journal["run"], exc)
