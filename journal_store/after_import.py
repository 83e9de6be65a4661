"""The read models brought up to date after an import, which has committed by then.

A failure there is not the import's: its events are in the store, and a second import of the
file adds nothing. Answered as a server error (the API's 500, the page's, the command's
traceback), it read as "not imported" when everything was, and the person importing could
not tell what had happened. So the import's answer stands, with a note that the pages may not
show its runs yet; the failure goes to the log with its traceback, and the next catch-up (any
page's) tries again.
"""

from __future__ import annotations

import logging

from journal_store import projection

log = logging.getLogger(__name__)

NOTE = (
    "the file was imported, but the read models the pages show could not be brought up to "
    "date after it (the server's log says why): its runs may not be listed until they are"
)


def catch_up(using: str = "default") -> str | None:
    """Catch the read models up; None when that went through, else the note to give."""
    try:
        projection.catch_up(using=using)
    except Exception:  # whatever it was, the import stands: said, and logged whole
        log.exception("catching the read models up after an import failed")
        return NOTE
    return None
