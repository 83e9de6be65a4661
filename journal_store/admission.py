"""What an import lets in: the ids, kinds and envelope a line of someone else's file may carry.

A journal file is untrusted input: anybody who may import can write it by hand. These checks
are about one line at a time and need no database; what a line may do to the store (which runs
and streams it may create) is decided in transfer.py.

Run ids. Runs started here are `r-` and 12 hex digits (runtime.flight.new_run_id). An imported
run's id may be 1 to 64 characters (the column's width) of letters, digits, `.`, `_` and `-`,
starting with a letter or digit, and without `..`: it is a URL path segment, a file name part
and a stream name part, so no slash, colon, space or control character.

Event ids are 32 hex digits, or a UUID written with dashes (stored as the 32 digits).

Kinds. A file cannot show who decided anything, nor that the work it parks is this server's to
do, so two groups of kinds are refused from every import (the page, the API and the command):
people's decisions that act beyond the run the file creates (retrying or discarding a dead
letter, resolving a conflict, declaring or superseding an intent) and open review items (dead
letters, parked conflicts), which would ask this server's reviewers to spend its workers and
model keys, or to commit a value to a live fact, on evidence nobody here produced.

Nor can a file say what became of the run's trace: its pushes to a collector (the kinds of
runtime/events/traces.py, on the run's `traces-<id>` stream) are the exporting store's, to its
collector. Imported, the run's page said "Trace pushed" of a store that never pushed it, a
queued push counted against this store's bound of waiting pushes (journal_store/pending_pushes)
with no worker here to send it, and a batch or live push another collector took was left out
of every push this store made of the run. Export leaves them out since 2026-12-03; an export
from before carries them, and its store may be gone, so that it cannot be exported again. So a
line of those kinds on its own run's traces stream is left out (`trace_push`: not written,
counted, and said in the import's report), and any other line that touches them is refused
(`trace_problem`): such a kind on another stream, another kind on a traces stream, or a run's
pushes on another run's traces stream. No export ever wrote those.

A person's stop and resume of the run itself (StopRequested, ResumeRequested in its control
stream; RunInterrupted, RunResumed where the run honoured them) are taken, as the file's word,
as a fork's RunForked, the message a person put into it (MessageInjected) and its tags
(RunTagged) are: they are the run's own minutes, and its replay needs them (turn_boundary.boundary
reads the interruption and the resume back where they stand; without them a stopped and
resumed run's record would not replay), while they decide nothing here: they name no other
run (a line writes only the run the file creates), and nothing here drives an imported run, so
no stop of it is honoured and nobody may stop or resume it (services.runs.RunImported). The
run's pages say it was read from a file, whose word its audit is. A line this store holds
already, identically, is none of these rules' business: it writes nothing (transfer.py).
"""

from __future__ import annotations

import re
import uuid

from pydantic import ValidationError

from runtime import streams
from runtime.events import (
    MAX_INT,
    BudgetExhausted,
    Event,
    TeamStarted,
    Usage,
    float_problem,
    integer_problem,
    shown,
)
from runtime.events.traces import PUSH_KINDS
from runtime.team import FlightConfig

EVENT_ID = re.compile(
    r"[0-9a-fA-F]{32}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
)
MAX_STREAM = 200  # the stream column's width
MAX_NAME = 64  # agent and task_id columns

DECISIONS = frozenset(
    {
        "DeadLetterRetried",
        "DeadLetterDiscarded",
        "ConflictResolved",
        "IntentDeclared",
    }
)
# Not StopRequested, ResumeRequested, RunInterrupted nor RunResumed: a person's stop and resume
# of the run the file creates are taken as the file's word (see above).
REVIEW_ITEMS = frozenset({"DeadLettered", "ConflictParked"})
# This server's own note of where a run came from: a file cannot say it was imported here.
PROVENANCE = frozenset({"JournalImported"})
# The exporting store's pushes of the run's trace to its collector (see above).
TRACE_PUSHES = frozenset(kind.kind for kind in PUSH_KINDS)
# Where an export may carry them, and what becomes of them there.
PUSHES_PLACE = (
    "a push of a run's trace stands only on that run's own traces-<run> stream, where an "
    "import leaves it out (this store pushes the run's trace itself)"
)


def event_id(value: str) -> str | None:
    """The id as stored (32 lowercase hex digits), or None when it is not an event id."""
    if not EVENT_ID.fullmatch(value):
        return None
    if len(value) == 32 and value == value.lower():
        return value  # already as stored (the usual case: no UUID to build)
    return uuid.UUID(value).hex


def run_id_problem(run_id: str) -> str | None:
    """What is wrong with a line's run id, naming its field."""
    if why := run_id_refusal(run_id):
        return f"field 'run_id': {why}"
    return None


def run_id_refusal(run_id: str) -> str | None:
    """Why a run cannot be made under `run_id`, naming no field: the import's new run id is
    no line's field, but the command's --run-id."""
    if streams.is_new_run_id(run_id):
        return None
    return f"{shown(run_id)} is not a run id ({streams.NEW_RUN_ID_RULE})"


def kind_problem(event: Event) -> str | None:
    if event.kind in DECISIONS:
        who = getattr(event, "by", None)
        return (
            f"{event.kind} records a person's decision (by {shown(who)}); a file cannot show "
            "who decided, so no import carries decisions"
        )
    if event.kind in PROVENANCE:
        return f"{event.kind} is this server's note of an import it did; a file cannot carry it"
    if event.kind in REVIEW_ITEMS:
        return (
            f"{event.kind} opens an item in a review queue; a file cannot put work before this "
            "server's reviewers, so no import carries review items"
        )
    return None


def envelope_problem(event: Event) -> str | None:
    """Envelope values the store's columns or the pages could not hold (its `t` is a time
    like any other: amount_problem)."""
    for name in ("agent", "task_id"):
        value = getattr(event, name)
        if value is not None and len(value) > MAX_NAME:
            return f"field {name!r}: longer than {MAX_NAME} characters"
        # Columns of their own, outside the JSON whose NUL the read models show as U+FFFD:
        # PostgreSQL's text refused the line as the store's error, SQLite kept it raw. The
        # runtime's names never hold one (a task's id is "T" and digits: repo_fix/roles.py).
        if value is not None and "\x00" in value:
            return f"field {name!r} holds a NUL character (U+0000), which no name does"
    return None


def amount_problem(event: Event) -> str | None:
    """Numbers the read models could not hold or add up, nor the pages show: every whole
    number the event carries (events.integer_problem), every time and other float
    (events.float_problem: the envelope's `t`, a lease's expiry, a stall's start... each
    within what a clock shows), as every append checks; and the allowance in a run's
    settings."""
    if problem := integer_problem(event) or float_problem(event):
        return problem
    if isinstance(event, TeamStarted):
        value = event.config.get("allowance")
        if isinstance(value, int) and not -MAX_INT <= value <= MAX_INT:
            return f"field 'config.allowance': {shown(value)} is more than a run can count"
    return None


def figures_problem(event: Event) -> str | None:
    """Figures no run records together, which the bill, the run page and the budget's reason
    would show as they stand: a call's usage whose total is less than its prompt and completion
    (every usage the runtime records totals at least its parts: openai_wire.parse_usage,
    add_usage), and a spent allowance below zero or holding back more than it allows (Budget
    refuses such a ledger)."""
    usage = getattr(event, "usage", None)
    if isinstance(usage, Usage) and usage.prompt is not None and usage.completion is not None:
        parts = usage.prompt + usage.completion
        if usage.total < parts:
            return (
                f"field 'usage.total': {usage.total} is less than its prompt and completion "
                f"together ({parts}), which a call's total never is"
            )
    if isinstance(event, BudgetExhausted):
        for name in ("spent", "allowance", "held"):
            value = getattr(event, name)
            if value is not None and value < 0:
                return f"field {name!r}: {value} tokens, less than none"
        if event.allowance is not None and event.held > event.allowance:
            return (
                f"field 'held': {event.held} is more than its allowance ({event.allowance}): "
                "a ledger holds back at most what it allows"
            )
    return None


def call_problem(event: Event) -> str | None:
    """A `call` (MutationRefused, FactChanged, ClaimAsserted: runtime/tools.py `Call.ref`,
    `<stream>@<version>`) that is no tool call of the line's own run: the record a call run
    again finds its answer in would name another run's call."""
    call = getattr(event, "call", None)
    if not isinstance(call, str):
        return None
    stream, at, version = call.rpartition("@")
    if at and version.isdigit() and version.isascii() and streams.owned_by(stream, event.run_id):
        return None
    return (
        f"field 'call': {shown(call)} is no call of run {shown(event.run_id)} (a call is "
        "named by one of the run's own streams and a version: run-RUN@7)"
    )


# Of what FlightConfig says of a run's settings, only these are refused at import: a value out
# of its range is one no replay or resume here would take, and nothing else could use. A setting
# left out (a hand-made journal's defaults) or not known to this version is not: replay names
# those itself, and refusing them refused real journals.
RANGE_ERRORS = frozenset({"greater_than", "greater_than_equal", "less_than", "less_than_equal"})


def settings_problem(event: Event) -> str | None:
    """A run's setting out of its range (a turn cap of 0, a window of a billion characters)."""
    if not isinstance(event, TeamStarted):
        return None
    try:
        FlightConfig.model_validate(event.config)
    except ValidationError as exc:
        for error in exc.errors():
            if error["type"] in RANGE_ERRORS:
                where = ".".join(str(part) for part in error["loc"])
                said = error["msg"][0].lower() + error["msg"][1:]
                return f"field 'config.{where}': {shown(error.get('input'))}: {said}"
    return None


def stream_problem(stream: str) -> str | None:
    if not stream:
        return "field 'stream': empty"
    if len(stream) > MAX_STREAM:
        return f"field 'stream': longer than {MAX_STREAM} characters"
    return None


def trace_push(event: Event, stream: str) -> bool:
    """Whether the line is one of its run's pushes of the run's trace, where an export from
    before 2026-12-03 put them (the run's own traces stream): an import leaves it out."""
    return event.kind in TRACE_PUSHES and stream == streams.traces(event.run_id)


def trace_problem(event: Event, stream: str) -> str | None:
    """A line that touches the pushes of a trace and is not one of its run's own (trace_push),
    which no export wrote: refused, not left out, as a forged line is."""
    on_traces = stream.startswith(streams.traces(""))
    if event.kind in TRACE_PUSHES and on_traces:
        return (
            f"field 'stream': {shown(stream)} is not the traces stream of the line's run "
            f"{shown(event.run_id)} ({streams.traces(event.run_id)}), and {PUSHES_PLACE}"
        )
    if event.kind in TRACE_PUSHES:
        return (
            f"field 'stream': {shown(stream)} holds no pushes of a trace, and {event.kind} "
            f"records one, to the collector of the store that exported it; {PUSHES_PLACE}"
        )
    if on_traces:
        return (
            f"field 'kind': {event.kind} on stream {shown(stream)}, which holds only the "
            f"pushes of a run's trace ({', '.join(sorted(TRACE_PUSHES))})"
        )
    return None


def started_by(event: Event, by: str | None) -> Event:
    """A TeamStarted with `by` as the run's starter: whoever imports the file starts the run."""
    if not isinstance(event, TeamStarted) or event.config.get("started_by") == by:
        return event  # (a config without the key and no importer: left as written)
    return event.model_copy(update={"config": {**event.config, "started_by": by}})
