"""What a tool call wrote into a shared stream, read from where the call was dispatched.

A tool that knows its call (runtime/tools.py `Call`, named by `Call.ref`: `<stream>@<at>`)
keeps it with what it writes (the gate's refusal in `gate-<run>`, the desk's claim on an
order), so that the same call run again by a resumed step finds it. Those streams grow with
every call of a run (the gate's log) or of every run on a subject (its claims), and reading one
whole for each call cost what it had grown to. Nothing a call writes can come before its
dispatch: the session makes the event the call follows (its ToolDispatched, or its retry's
ToolRetryScheduled) durable before the tool runs (Session.run_tool flushes first), and
positions become visible in order. So only the events of the kind after that event's position
are read (`read_of_kind`, which the database answers by a partial index of the kind's rows:
journal_store/migrations/0038): those of the call and of whatever ran beside it, not the
stream's history."""

from __future__ import annotations

from runtime.journal import Journal, Recorded, read_between, read_of_kind


def dispatched_at(journal: Journal, call: str) -> int:
    """The journal position of the event the call `call` (a `Call.ref`) follows; 0 where the
    ref names no stored event (a caller's own name for a call, not a session's): then nothing
    is known to come after it, and the whole stream is read."""
    stream, _, at = call.rpartition("@")
    if not stream or not at.isdigit() or int(at) < 1:
        return 0
    found = read_between(journal, stream, int(at) - 1, int(at))
    return found[0].position if found else 0


def written_since(journal: Journal, stream: str, kind: str, call: str) -> list[Recorded]:
    """The stream's events of `kind` that may be the call's: those after its dispatch."""
    return read_of_kind(journal, stream, kind, dispatched_at(journal, call))
