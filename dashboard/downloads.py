"""Download names: a run's files are named after the run, never by pasting its id into a header."""

from __future__ import annotations

import re

from django.utils.http import content_disposition_header

UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def attachment(run_id: str, suffix: str) -> str:
    """The Content-Disposition for one of a run's files (`.jsonl`, `.otlp.json`).

    Anything in the id but letters, digits, '.', '_' and '-' becomes '_', so a hostile id
    cannot add parameters (`filename*=`), break out of the quotes or name a path; Django
    builds the header itself.
    """
    name = UNSAFE.sub("_", run_id)[:100].lstrip(".") or "run"
    header = content_disposition_header(True, f"{name}{suffix}")
    assert header is not None  # always a header for an attachment
    return header
