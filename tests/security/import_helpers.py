"""What the import attacks share: a signed-in importer without the reviewer permission, a
victim run already in the store, the three ways in (API, page, command), and a snapshot of
everything an import could write, to show that a refused file wrote nothing.

They are plain functions, called by the tests that need them (tests/security needs no conftest).
"""

from __future__ import annotations

import html
import io
import json
import uuid
from dataclasses import dataclass

from django.core.management import CommandError, call_command
from django.test import Client

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import (
    AuditEntry,
    Conflict,
    DeadLetter,
    RunState,
    RunSummary,
    StoredEvent,
)
from runtime.events import ConflictParked, DeadLettered, TeamStarted
from tests.dashboard.conftest import make_user

VICTIM = "r-0123456789ab"
LETTER = f"{VICTIM}:1"
CONFLICT = "cf-0123456789abcdef"
CHANNELS = ["api", "page", "command"]


def line(kind: str, run_id: str, **fields) -> dict:
    """A flat line with a fresh id."""
    return {"kind": kind, "id": uuid.uuid4().hex, "t": 1_700_000_000.0, "run_id": run_id, **fields}


def team_started(run_id: str, **config) -> dict:
    return line(
        "TeamStarted",
        run_id,
        team="repo-fix",
        scenario="first-flight",
        task="fix it",
        config={"team": "repo-fix", "scenario": "first-flight", **config},
    )


def jsonl(*rows: dict | str) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows).encode()


def an_importer():
    """Signed in, may import, may not decide on review items."""
    return make_user("importer")


def a_victim() -> str:
    """Somebody else's run, parked: an open dead letter and an open conflict on it."""
    journal = DjangoJournal()
    journal.append(
        f"run-{VICTIM}",
        [
            TeamStarted(
                run_id=VICTIM,
                team="repo-fix",
                scenario="first-flight",
                task="the victim's task",
                config={"started_by": "owner"},
            ),
            DeadLettered(run_id=VICTIM, letter_id=LETTER, reason="a deadline passed"),
        ],
        0,
    )
    journal.append(
        f"conflict-{CONFLICT}",
        [
            ConflictParked(
                run_id=VICTIM,
                conflict_id=CONFLICT,
                subject="order:o-1",
                predicate="status",
                conflict_type="value",
                claims=[],
            )
        ],
        0,
    )
    projection.catch_up()
    return VICTIM


@dataclass(frozen=True)
class Answer:
    status: int  # the HTTP status; for the command, 0 when it succeeded and 1 when it failed
    text: str  # the body or the command's message, unescaped


def import_via(channel: str, user, data: bytes, tmp_path, name: str = "j.jsonl") -> Answer:
    """Import `data` as `user` through the API, the page or the management command."""
    if channel == "command":
        path = tmp_path / name
        path.write_bytes(data)
        out = io.StringIO()
        try:
            call_command("import_journal", str(path), "--by", user.username, stdout=out)
        except CommandError as exc:
            return Answer(1, str(exc))
        return Answer(0, out.getvalue())
    client = Client()
    client.force_login(user)
    upload = io.BytesIO(data)
    upload.name = name
    url = "/api/journals" if channel == "api" else "/import"
    response = client.post(url, {"journal": upload})
    return Answer(response.status_code, html.unescape(response.content.decode()))


def refused(channel: str) -> int:
    return 1 if channel == "command" else 400


def snapshot() -> dict[str, object]:
    """Everything an import could have written: the journal and every read model."""
    projection.catch_up()
    return {
        "events": StoredEvent.objects.count(),
        "last": list(StoredEvent.objects.order_by("-position").values_list("position")[:1]),
        "runs": sorted(RunSummary.objects.values_list("run_id", "status", "started_by")),
        "states": RunState.objects.count(),
        "letters": sorted(DeadLetter.objects.values_list("letter_id", "status", "decided_by")),
        "conflicts": sorted(Conflict.objects.values_list("conflict_id", "status", "decided_by")),
        "audit": AuditEntry.objects.count(),
    }
