"""An imported journal is untrusted: its strings may hold NUL characters ("\\u0000" in its
JSON), which the journal keeps and the read models show as U+FFFD (journal_store/nul.py). A
claim holding one imports on PostgreSQL too, where the claims' id index failed its append
(migration 0052); a claim under an id holding one is refused, naming its line."""

from __future__ import annotations

import io
import json

import pytest

from journal_store import projection
from journal_store.models import AuditEntry, StoredEvent, ThreadMessage
from journal_store.transfer import ImportRefused, import_journal
from tests.journal_store.conftest import on_every_backend

RUN = {"run_id": "r-x", "stream": "run-r-x"}
CLAIM = {
    "kind": "ClaimAsserted",
    "claim_id": "cl-1",
    "subject": "file:a.py",
    "predicate": "status",
    "value": "done\u0000 \\u0000",
    "based_on": 0,
    "source": "model",
    "by": "coder",
    "evidence": {"read\u0000": "PK\u0003\u0004\u0000"},
}
LINES = [
    {"kind": "RunStarted", "agent": "coder", "task": "fix it\u0000 now"},
    {
        "kind": "MessageSent",
        "sender": "coder",
        "recipient": "reviewer",
        "task_id": "T1",
        "performative": "request",
        "payload": {"text": "see\u0000this", "\u0000": ["\u0000"]},
    },
    CLAIM,
]


def jsonl(lines: list[dict]) -> bytes:
    return "".join(
        json.dumps({**line, **RUN, "version": n}) + "\n" for n, line in enumerate(lines, 1)
    ).encode()


@on_every_backend(transaction=True)
def test_a_journal_holding_nul_escapes_is_imported_and_projected(alias):
    data = jsonl(LINES)
    report = import_journal(io.BytesIO(data), using=alias)
    assert report.added == 3
    projection.catch_up(using=alias)
    assert projection.behind(alias) == dict.fromkeys(projection.PROJECTORS, 0)
    [message] = ThreadMessage.objects.using(alias).filter(run_id="r-x")
    assert message.payload == {"text": "see\ufffdthis", "\ufffd": ["\ufffd"]}
    shown = repr(list(AuditEntry.objects.using(alias).filter(run_id="r-x").values()))
    assert "\x00" not in shown
    # The journal keeps the claim as the file had it, its escaped backslash text too.
    stored = StoredEvent.objects.using(alias).get(kind="ClaimAsserted").data
    assert json.loads(stored)["value"] == "done\x00 \\u0000"


@on_every_backend(transaction=True)
def test_a_claim_under_an_id_holding_a_nul_is_refused_naming_its_line(alias):
    data = jsonl([LINES[0], {**CLAIM, "claim_id": "cl-\u0000"}])
    with pytest.raises(ImportRefused) as info:
        import_journal(io.BytesIO(data), using=alias)
    assert info.value.problems == [
        "line 2: field 'claim_id' holds a NUL character (U+0000), which no claim's id does"
    ]
    assert StoredEvent.objects.using(alias).count() == 0


@on_every_backend(transaction=True)
@pytest.mark.parametrize("field", ["agent", "task_id"])
def test_a_name_holding_a_nul_is_refused_naming_its_line_on_either_database(alias, field):
    # PostgreSQL refused it as the store's error; SQLite stored it raw, beside the read
    # models' U+FFFD for the same character in the JSON.
    data = jsonl([LINES[0], {**LINES[1], field: "co\u0000der"}])
    with pytest.raises(ImportRefused) as info:
        import_journal(io.BytesIO(data), using=alias)
    assert info.value.problems == [
        f"line 2: field {field!r} holds a NUL character (U+0000), which no name does"
    ]
    assert StoredEvent.objects.using(alias).count() == 0
