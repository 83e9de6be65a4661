"""The export of any run flown here imports back into this store adding nothing (200, added 0),
and into a fresh store as the same run, whose export is the same file: a parallel-writers
run (its writers' leases are streams of its own, lease-RUN:fix:T1) and a run a person stopped
and resumed (StopRequested, ResumeRequested, RunInterrupted and RunResumed are its minutes)."""

from __future__ import annotations

import io

import pytest

from journal_store import projection
from journal_store.models import RunSummary, StoredEvent
from services import letters, runs
from services.control import Control
from services.steps import drive_step
from tests.dashboard.conftest import drive, run_of

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("recorded_runs")]


def upload(body: bytes, name: str = "run.jsonl") -> io.BytesIO:
    file = io.BytesIO(body)
    file.name = name
    return file


def stopped_and_resumed() -> str:
    run_id = run_of("first-flight", steps=1)
    runs.interrupt(run_id, "owner", "a look at the plan")
    assert drive_step(run_id, "test") != "stepped"  # it stops at its next turn boundary
    assert runs.status_of(run_id) == "interrupted"
    runs.resume(run_id, "owner", "go on")
    drive(run_id)
    return run_id


def flown(kind: str) -> str:
    if kind == "stopped-and-resumed":
        return stopped_and_resumed()
    return run_of(kind)


def exported(client, run_id: str) -> bytes:
    return b"".join(client.get(f"/runs/{run_id}/export.jsonl").streaming_content)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["parallel-writers", "stopped-and-resumed"])
def test_the_export_imports_back_adding_nothing_and_into_a_fresh_store_as_itself(as_owner, kind):
    run_id = flown(kind)
    assert RunSummary.objects.get(run_id=run_id).status == "done"
    body = exported(as_owner, run_id)
    kinds = body.decode()
    if kind == "stopped-and-resumed":
        assert all(k in kinds for k in ("StopRequested", "RunInterrupted", "RunResumed"))
    else:
        assert f'"stream":"lease-{run_id}:fix:T1"' in kinds
    before = StoredEvent.objects.count()
    again = as_owner.post("/api/journals", {"journal": upload(body)})
    assert again.status_code == 200, again.content
    assert again.json()["added"] == 0
    assert StoredEvent.objects.count() == before

    StoredEvent.objects.all().delete()  # a fresh store
    projection.rebuild()
    fresh = as_owner.post("/api/journals", {"journal": upload(body)})
    assert fresh.status_code == 201, fresh.content
    assert fresh.json()["added"] == len(body.splitlines())
    assert exported(as_owner, run_id) == body


def test_a_run_stopped_elsewhere_is_imported_and_nobody_here_resumes_it(as_owner):
    run_id = run_of("first-flight", steps=1)
    runs.interrupt(run_id, "owner", "a look at the plan")
    drive_step(run_id, "test")
    assert runs.status_of(run_id) == "interrupted"
    body = exported(as_owner, run_id)
    StoredEvent.objects.all().delete()  # a fresh store
    projection.rebuild()
    fresh = as_owner.post("/api/journals", {"journal": upload(body)})
    assert fresh.status_code == 201, fresh.content
    # Its file says a person stopped it; here it is an imported run, which nothing drives.
    assert runs.status_of(run_id) == "imported"
    with pytest.raises(runs.RunImported):
        runs.resume(run_id, "owner")
    assert exported(as_owner, run_id) == body


def discarded() -> str:
    """A dead letter a person discarded: its export holds a review item and a decision."""
    run_id = run_of("first-flight", steps=1)
    letter = Control(run_id).dead_letter("a step kept failing", 3, "Boom: no")
    letters.decide_letter(letter.letter_id, "discard", "rosa", "not worth it")
    return run_id


def desk_run() -> str:
    """A desk run: its export holds its writes to the order's facts and claims, shared streams
    whose versions skip the other writers' events, and the conflict it parked."""
    run_id = runs.start_run("support-desk", "lost-update", by="owner")
    drive(run_id)
    return run_id


@pytest.mark.parametrize("make", [discarded, desk_run], ids=["discarded", "desk"])
def test_an_export_no_fresh_store_takes_still_imports_back_here_adding_nothing(as_owner, make):
    """Its lines are this store's own, held byte for byte: they write nothing, so they forge
    nothing, whatever their kind or stream."""
    run_id = make()
    body = exported(as_owner, run_id)
    before = StoredEvent.objects.count()
    again = as_owner.post("/api/journals", {"journal": upload(body)})
    assert again.status_code == 200, again.content
    assert again.json()["added"] == 0
    assert StoredEvent.objects.count() == before
    # One field changed and it is judged as any line: a decision a file cannot carry.
    changed = body.replace(b'"reason":"not worth it"', b'"reason":"forged"')
    if changed != body:
        refused = as_owner.post("/api/journals", {"journal": upload(changed)})
        assert refused.status_code == 400
        assert "DeadLetterDiscarded records a person's decision" in refused.content.decode()
    assert StoredEvent.objects.count() == before


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["parallel-writers", "deadlocked-writers"])
def test_a_writers_run_imported_under_another_id_replays_as_itself(as_owner, scenario):
    """Its resources are named after the run (`<run>:fix:T1`): imported under another id with
    their streams renamed and not the names the events hold, the harness took `<new>:fix:T1`
    where the journal said `<old>:fix:T1`, and the replay parted at the first lease."""
    from journal_store.journal import DjangoJournal
    from journal_store.transfer import import_journal
    from runtime import flight

    run_id = run_of(scenario)
    body = exported(as_owner, run_id)
    moved = "r-moved" + run_id[-6:]
    import_journal(upload(body), name="run.jsonl", run_id=moved)
    projection.catch_up()
    named = [
        getattr(r.event, field)
        for r in DjangoJournal().read_all()
        if r.event.run_id == moved
        for field in ("resource", "lease", "intent_id")
        if isinstance(getattr(r.event, field, None), str)
    ]
    assert named and not [name for name in named if run_id in name]
    result = flight.replay(DjangoJournal(), moved)
    assert result.identical, result
