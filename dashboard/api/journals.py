"""/api/journals: importing a JSONL journal (ours, or the reference runtime's)."""

# No `from __future__ import annotations`: django-ninja reads the annotations at runtime.

from typing import Any

from django.http import HttpRequest
from ninja import File, Form, Router, Status
from ninja.files import UploadedFile

from dashboard.api.auth import user_name
from dashboard.api.schemas import ImportOut, ImportRefusedOut
from dashboard.uploads import one_journal
from journal_store import after_import
from journal_store.import_reading import left_out_said
from journal_store.transfer import import_journal

router = Router(tags=["journals"])


@router.post("", response={200: ImportOut, 201: ImportOut, 400: ImportRefusedOut})
def import_(
    request: HttpRequest,
    journal: File[UploadedFile],
    allow_torn: bool = False,
    # The same, as a field beside the file: a script that posts the file as a form (curl -F)
    # sends it that way, and was ignored, then told to send what it had sent.
    allow_torn_field: bool = Form(False, alias="allow_torn"),  # type: ignore[type-arg]
) -> Any:
    """Import a journal, all or nothing: a refused file (400) lists its problems by line. 201
    when events were added; 200 when the store held every one already (`added` 0); `note`
    says when the read models could not be brought up to date after the import; `left_out`
    what of the file was not written (a run's trace pushes, as older exports carried them)
    `allow_torn` may be given in the query or as a form field beside the file."""
    one_journal(request)
    report = import_journal(
        journal.open("rb"),
        name=journal.name or "upload",
        size=journal.size,
        allow_torn=allow_torn or allow_torn_field,
        by=user_name(request),
    )
    note = after_import.catch_up()
    return Status(
        201 if report.added else 200,
        {
            "run_ids": report.run_ids,
            "events": report.events,
            "added": report.added,
            "torn": report.torn,
            "left_out": [
                {"stream": stream, "lines": lines, "said": left_out_said(stream, lines)}
                for stream, lines in report.left_out.items()
            ],
            "note": note,
        },
    )
