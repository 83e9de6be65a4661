"""An imported file may only create new runs: it cannot add to a stored run, write to a stream
of another run (stored, or introduced by the same file), to a shared stream, or to a stream a
stored run would read as its own. Each refusal names the line and writes nothing."""

from __future__ import annotations

import json

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary
from runtime.events import BudgetDebited
from runtime.flat import dumps
from tests.security.import_helpers import (
    CHANNELS,
    VICTIM,
    a_victim,
    an_importer,
    import_via,
    jsonl,
    line,
    refused,
    snapshot,
    team_started,
)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("channel", CHANNELS)
def test_an_import_cannot_append_to_a_stored_run(channel, tmp_path):
    """The victim's verdict, forged from a stream its run has not used yet."""
    importer = an_importer()
    a_victim()
    before = snapshot()
    forged = line(
        "TeamFinished", VICTIM, status="failed", reason="forged", stream=f"breakers-{VICTIM}"
    )
    answer = import_via(channel, importer, jsonl(forged), tmp_path)
    assert answer.status == refused(channel), answer.text
    assert f"line 1: run '{VICTIM}' is already stored" in answer.text
    assert "an import may only create new runs" in answer.text
    assert snapshot() == before
    assert RunSummary.objects.get(run_id=VICTIM).status != "failed"


def test_an_import_cannot_append_after_replaying_a_stored_prefix(tmp_path):
    """The victim's own events first (they are stored: they would write nothing), then more."""
    importer = an_importer()
    a_victim()
    stored = DjangoJournal().read(f"run-{VICTIM}")
    rows = [dumps(r.event, r.stream, r.version) for r in stored]
    more = line("TeamFinished", VICTIM, status="done", stream=f"run-{VICTIM}", version=3)
    before = snapshot()
    answer = import_via("api", importer, jsonl(*rows, more), tmp_path)
    assert answer.status == 400
    assert f"line 3: run '{VICTIM}' is already stored" in answer.text
    assert snapshot() == before


@pytest.mark.parametrize(
    "stream",
    [
        f"lease-{VICTIM}",  # a driver's lease that never expires: the victim never runs again
        f"control-{VICTIM}",
        f"run-{VICTIM}",
        f"worker-{VICTIM}-S1-orders-worker",
    ],
)
def test_a_new_run_cannot_write_a_stored_runs_stream(stream, tmp_path):
    importer = an_importer()
    a_victim()
    lease = line("DriverLeased", "r-new", holder="evil", expires=9e9, at_version=0, stream=stream)
    before = snapshot()
    answer = import_via("api", importer, jsonl(team_started("r-new"), lease), tmp_path)
    assert answer.status == 400
    assert f"line 2: stream '{stream}' is not one of run r-new's own streams" in answer.text
    assert snapshot() == before


def test_a_line_cannot_write_another_runs_stream_inside_the_same_file(tmp_path):
    importer = an_importer()
    rows = [
        team_started("r-one"),
        team_started("r-two"),
        line("BudgetDebited", "r-one", amount=1, stream="run-r-two", version=2),
    ]
    before = snapshot()
    answer = import_via("api", importer, jsonl(*rows), tmp_path)
    assert answer.status == 400
    assert "line 3: stream 'run-r-two' is not one of run r-one's own streams" in answer.text
    assert snapshot() == before


@pytest.mark.parametrize(
    "stream",
    [
        "effect-fx-0123456789abcdef0123456789abcdef01234567",  # an effect "already done"
        "subject-order:o-1",  # a live fact of the support desk
        "claims-order:o-1",
        "conflict-cf-planted",
        "intent-ticket-o-1",
        "inbox-coder",
    ],
)
def test_an_import_cannot_write_a_shared_stream(stream, tmp_path):
    importer = an_importer()
    planted = line("BudgetDebited", "r-new", amount=1, stream=stream, version=1)
    before = snapshot()
    answer = import_via("api", importer, jsonl(team_started("r-new"), planted), tmp_path)
    assert answer.status == 400
    assert f"line 2: stream '{stream}' is not one of run r-new's own streams" in answer.text
    assert snapshot() == before


def test_a_shared_streams_line_naming_no_run_is_refused_without_naming_a_run_not_in_the_file(
    tmp_path,
):
    """A journal flown on the command line writes the order's first fact with no run id: the
    refusal named the id the file's run-less lines get, which is in no line of the file."""
    importer = an_importer()
    fact = line("BudgetDebited", "", amount=1, stream="subject-order:o-1", version=1)
    answer = import_via("api", importer, jsonl(team_started("r-new"), fact), tmp_path)
    assert answer.status == 400
    assert (
        "line 2: stream 'subject-order:o-1' is no run's own stream, and the line names no run: "
        in answer.text
    )


def test_a_new_run_cannot_create_a_stream_a_stored_run_would_read_as_its_own(tmp_path):
    """`worker-r-a-b-...` is a specialist stream of run `r-a`, and of the stored run `r-a-b`."""
    importer = an_importer()
    DjangoJournal().append("run-r-a-b", [BudgetDebited(run_id="r-a-b", amount=1)], 0)
    planted = line("BudgetDebited", "r-a", amount=1, stream="worker-r-a-b-S9-orders-worker")
    before = snapshot()
    answer = import_via("api", importer, jsonl(team_started("r-a"), planted), tmp_path)
    assert answer.status == 400
    assert "line 2: stream 'worker-r-a-b-S9-orders-worker' could be stored run 'r-a-b''s" in (
        answer.text
    )
    assert snapshot() == before


def test_a_stream_already_in_the_store_is_not_appended_to_by_a_new_run(tmp_path):
    """A stored stream whose events name no run (as a breaker's may) is still not the file's."""
    importer = an_importer()
    DjangoJournal().append("run-r-new", [BudgetDebited(run_id="", amount=1)], 0)
    before = snapshot()
    answer = import_via("api", importer, jsonl(team_started("r-new")), tmp_path)
    assert answer.status == 400
    assert "line 1: stream 'run-r-new' already holds 1 events" in answer.text
    assert snapshot() == before


def test_the_refusal_of_a_desk_runs_shared_stream_says_it_cannot_be_imported(tmp_path):
    """The export of a support-desk run holds its order's claims: the refusal, cut at 300
    characters, ended "(an order's claims, effects, facts and intents, which ot...", its point
    (such a run cannot be imported) lost after the cut, on the page and in the API."""
    importer = an_importer()
    run = "r-dc83adfb80d9"
    claim = line("BudgetDebited", run, amount=1, stream="claims-order:o-dc83adfb80d9", version=1)
    answer = import_via("api", importer, jsonl(team_started(run), claim), tmp_path)
    assert answer.status == 400
    [problem] = json.loads(answer.text)["problems"]
    assert problem.startswith(
        f"line 2: stream 'claims-order:o-dc83adfb80d9' is not one of run {run}"
    )
    assert "a support-desk run, a saga's effects) cannot be imported" in problem


@pytest.mark.parametrize(
    "kind, fields",
    [
        ("ClaimsReconciled", {"winner": "cl-1", "losers": [], "rule": "forged"}),
        ("LiveClaimsNoted", {"live": [], "at": [], "through": 1}),
    ],
)
def test_a_note_of_live_claims_is_refused_on_a_claims_stream_as_a_decision_is(
    kind, fields, tmp_path
):
    """A note that no claim is live would hide the claims before it from the reconciler: a file
    cannot write one where a stored run claims, by the shared stream's rule, as it cannot
    write the decisions it stands beside (neither kind is refused as such, off those streams)."""
    importer = an_importer()
    stream = "claims-order:o-1"
    forged = line(kind, "r-new", subject="order:o-1", predicate="status", stream=stream, **fields)
    before = snapshot()
    answer = import_via("api", importer, jsonl(team_started("r-new"), forged), tmp_path)
    assert answer.status == 400
    assert f"line 2: stream '{stream}' is not one of run r-new's own streams" in answer.text
    assert snapshot() == before
