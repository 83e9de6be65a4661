"""The command line's `otlp`: a run as an OpenTelemetry trace, OTLP/JSON or OTLP/protobuf,
written as its spans end so that a long run's trace takes flat memory. `runtime.cli`
registers it."""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Iterable
from pathlib import Path

from runtime import flight, otel
from runtime.cli import EXIT_BAD_INPUT, EXIT_OK, open_journal, run_of
from runtime.cli_args import whole
from runtime.replaced import holds_a_database, replaced, same_file


def cmd_otlp(args: argparse.Namespace) -> int:
    journal = open_journal(Path(args.journal))
    records = flight.traced_records(journal, run_of(journal, args.run))
    try:
        options = otel.TraceOptions(args.project, not args.no_content, args.content_chars)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if otel.untimed(records):
        print(f"error: {otel.UNTIMED}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.protobuf:
        if not (args.output and args.output != "-") and sys.stdout.isatty():
            print("error: protobuf is binary: name a file with -o FILE", file=sys.stderr)
            return EXIT_BAD_INPUT
        # A ResourceSpans at a time, as the spans end: flat memory here too.
        chunks: Iterable[bytes] = otel.otlp_protobuf_chunks(records, options)
    else:
        # Written as the spans end, not held: a long run's trace in flat memory.
        text = otel.otlp_json_chunks(records, options)
        chunks = itertools.chain((c.encode() for c in text), [b"\n"])
    if args.output and args.output != "-":
        output = Path(args.output)
        if same_file(output, Path(args.journal)):
            # Written over, the journal was gone: the one record of the run.
            print(f"error: {output} is the journal itself: name another file", file=sys.stderr)
            return EXIT_BAD_INPUT
        if holds_a_database(output):  # Minutes' store, or a backup of it: lost as well
            print(
                f"error: {output} is an SQLite database: a trace written there would replace "
                "it; name another file",
                file=sys.stderr,
            )
            return EXIT_BAD_INPUT
        try:
            with replaced(output) as out:
                out.writelines(chunks)
        except OSError as exc:
            if exc.filename is None:  # a full disk, an I/O error: not the caller's input
                raise
            print(f"error: {output}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    else:
        sys.stdout.buffer.writelines(chunks)
        sys.stdout.flush()
    return EXIT_OK


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the command on the command line's subparsers."""
    trace = sub.add_parser("otlp", help="the run as an OpenTelemetry trace (OTLP)")
    trace.add_argument("journal")
    trace.add_argument("--run", help="which run, when the journal holds several")
    trace.add_argument("--protobuf", action="store_true", help="OTLP/protobuf (default: OTLP/JSON)")
    trace.add_argument("-o", "--output", help="write to FILE (default: standard output)")
    trace.add_argument(
        "--project", default=otel.DEFAULT_PROJECT, help="service.name and project of the spans"
    )
    # One or the other: a length given with --no-content was taken and did nothing.
    content = trace.add_mutually_exclusive_group()
    content.add_argument(
        "--no-content", action="store_true", help="leave prompts, answers and tool data out"
    )
    content.add_argument(
        "--content-chars",
        type=whole(1, name="content_chars"),
        default=otel.DEFAULT_CONTENT_CHARS,
        help="the most characters of any one piece of content",
    )
    trace.set_defaults(func=cmd_otlp)
