"""A run's files, for the pages and the API alike: its journal as JSONL and as an OTLP trace.

Files are named after the run, never by pasting its id into a header. Callers check who may
see the run first.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from django.http import JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.utils.http import content_disposition_header

from journal_store import traces
from journal_store.transfer import export_lines
from runtime import otel
from runtime.journal import Recorded

UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def attachment(run_id: str, suffix: str) -> str:
    """The Content-Disposition for one of a run's files (`.jsonl`, `.otlp.json`, `.otlp.pb`).

    Anything in the id but letters, digits, '.', '_' and '-' becomes '_', so a hostile id
    cannot add parameters (`filename*=`), break out of the quotes or name a path; Django
    builds the header itself.
    """
    name = UNSAFE.sub("_", run_id)[:100].lstrip(".") or "run"
    header = content_disposition_header(True, f"{name}{suffix}")
    assert header is not None  # always a header for an attachment
    return header


def journal(run_id: str) -> StreamingHttpResponse:
    """The run's journal as export writes it, streamed: one flat JSON event per line."""
    response = StreamingHttpResponse(export_lines(run_id), content_type="application/x-ndjson")
    response["Content-Disposition"] = attachment(run_id, ".jsonl")
    return response


def otlp(run_id: str, protobuf: bool = False) -> HttpResponseBase:
    """The run's journal as an OTLP trace file, for any OpenTelemetry collector or viewer:
    OTLP/JSON or OTLP/protobuf (what collectors that refuse JSON take, Phoenix among them)."""
    return otlp_protobuf(run_id) if protobuf else otlp_json(run_id)


def untimed() -> JsonResponse:
    """The answer for a run whose journal records no times (an abridged reference journal,
    imported): its trace would place every span at 0, 1 January 1970."""
    return JsonResponse({"detail": otel.UNTIMED}, status=409)


def otlp_json(run_id: str) -> HttpResponseBase:
    """The trace as OTLP/JSON, streamed as its spans end (runtime/otel/encode.py)."""
    records = traced(run_id)
    if records is None:
        return untimed()
    chunks = otel.otlp_json_chunks(records, traces.options())
    response = StreamingHttpResponse(chunks, content_type="application/json")
    response["Content-Disposition"] = attachment(run_id, ".otlp.json")
    return response


def otlp_protobuf(run_id: str) -> HttpResponseBase:
    """The trace as OTLP/protobuf, streamed a ResourceSpans at a time as its spans end
    (runtime/otel/protobuf.py)."""
    records = traced(run_id)
    if records is None:
        return untimed()
    chunks = otel.otlp_protobuf_chunks(records, traces.options())
    response = StreamingHttpResponse(chunks, content_type=otel.PROTOBUF_TYPE)
    response["Content-Disposition"] = attachment(run_id, ".otlp.pb")
    return response


def traced(run_id: str) -> Iterator[Recorded] | None:
    """The run's traced records, read a page at a time as the file is written (`traces.paged`,
    what the push folds), up to the journal's last position now: a record added while the file
    streams (a late decision) is not half in it. None when the journal records no times, which
    the first timed record settles (a journal a runtime wrote has one at its start): a page
    read, not the run, where the download held the run's every record in a list first."""
    upto = traces.last_position()
    if otel.untimed(traces.paged(run_id, upto)):
        return None
    return traces.paged(run_id, upto)
