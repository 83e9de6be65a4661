"""The support desk through the API and the form: start a run on an order, let the workers
drive it, resolve the conflict it parks, and find the order committed and the decision audited."""

from __future__ import annotations

import json

import pytest

from desk.models import Order, Refund
from desk.services import TableOrders
from journal_store import transfer
from journal_store.journal import DjangoJournal
from runtime import cli
from tests.dashboard.conftest import drive

pytestmark = pytest.mark.django_db


def start(api, scenario, **body):
    response = api.post(
        "/api/runs",
        {"team": "support-desk", "scenario": scenario, **body},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    run_id = response.json()["run_id"]
    return run_id, drive(run_id)


def test_a_lost_update_is_parked_resolved_through_the_api_committed_and_audited(api):
    run_id, outcome = start(api, "lost-update", order="A-4471")
    assert outcome == "escalated"
    assert Order.objects.get(order_id="A-4471").status == "shipped"
    [conflict] = [c for c in api.get("/api/review/conflicts").json()["items"]]
    assert conflict["subject"] == "order:A-4471" and conflict["run_id"] == run_id
    cancel = next(c["claim_id"] for c in conflict["claims"] if c["value"] == "cancelled")
    resolved = api.post(
        f"/api/review/conflicts/{conflict['conflict_id']}/resolve",
        {"choice": cancel, "reason": "the customer asked before dispatch"},
        content_type="application/json",
    )
    assert resolved.status_code == 200, resolved.content
    order = Order.objects.get(order_id="A-4471")
    assert (order.status, order.version, order.updated_by) == ("cancelled", 3, "reviewer:reviewer")
    audit = api.get(f"/api/runs/{run_id}/audit").json()
    [entry] = [a for a in audit if a["what"] == "ConflictResolved"]
    assert entry["who"] == "reviewer" and entry["human"]
    assert entry["detail"]["why"] == "the customer asked before dispatch"


def test_a_desk_runs_export_reads_in_the_journal_toolbox(api, tmp_path, capsys):
    # The export holds the run's own writes to the order's facts and claims, not the order's
    # creation (no run's): the toolbox read it as a broken version sequence and refused it.
    run_id, _ = start(api, "lost-update", order="C-7")
    path = tmp_path / "desk.jsonl"
    with open(path, "w") as out:
        transfer.export(run_id, out)
    capsys.readouterr()
    assert cli.main(["views", str(path)]) == 0
    # As the API says it: waiting, its conflict parked (the conflict's stream is the run's
    # too, which the command line reads as the projector does).
    assert json.loads(capsys.readouterr().out)["status"] == "waiting"
    assert api.get(f"/api/runs/{run_id}").json()["status"] == "waiting"
    assert cli.main(["diff", str(path), str(path)]) == 0
    # Its desk cannot go on from it (the order's opening is no run's, so not in it): said so,
    # where it was a KeyError's traceback; and said before the fork is written, where the
    # fork was written first, a run that stopped at its first read of the order whenever it
    # was driven (with --go or without).
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    at = next(n for n, e in enumerate(lines, 1) if e["kind"] == "ModelResponded")
    capsys.readouterr()
    before = path.read_bytes()
    fork = ["fork", str(path), "--at", str(at), "--workspaces", str(tmp_path)]
    for go in ([], ["--go"]):
        assert cli.main([*fork, *go]) == 2
        out, err = capsys.readouterr()
        assert err == (
            "error: the fork could not go on live: order C-7: this journal holds changes to the "
            "order but not its opening (a run exported from a store carries only its own writes "
            "to the order's facts), so its desk cannot go on here; views, diagnose, diff, otlp "
            "and replay read it. Nothing of it was written\n"
        )
        assert "forked" not in out
        assert path.read_bytes() == before


def test_a_fork_whose_order_is_not_here_is_refused_and_writes_nothing(api):
    """The web's fork asks the team as the command line's does, of this host's world: every
    run flown here opened its order's row, so what refuses one here is a row gone (removed by
    hand). Refused (400) naming the order, nothing written, where the fork was written and
    failed at its first read of the order."""
    from journal_store.models import StoredEvent

    run_id, _ = start(api, "lost-update", order="F-1")
    at = next(
        r.position for r in DjangoJournal().read(f"run-{run_id}") if r.event.kind == "ModelCalled"
    )
    fork = {"at": at}
    assert (
        api.post(f"/api/runs/{run_id}/fork", fork, content_type="application/json").status_code
        == 201
    )
    Order.objects.filter(order_id="F-1").delete()
    before = StoredEvent.objects.count()
    refused = api.post(f"/api/runs/{run_id}/fork", fork, content_type="application/json")
    assert refused.status_code == 400, refused.content
    assert refused.json()["detail"] == (
        "the fork could not go on live: order F-1: the run opened it and works on it, and "
        "there is no such order here, so its desk cannot go on here. Nothing of it was written"
    )
    assert StoredEvent.objects.count() == before


def test_a_resolution_after_the_order_moved_is_a_409_and_changes_nothing(api):
    start(api, "lost-update", order="B-1")
    [conflict] = api.get("/api/review/conflicts").json()["items"]
    TableOrders(DjangoJournal()).set_status("B-1", "delivered", 2, "courier")
    ship = next(c["claim_id"] for c in conflict["claims"] if c["value"] == "shipped")
    refused = api.post(
        f"/api/review/conflicts/{conflict['conflict_id']}/resolve",
        {"choice": ship, "reason": "it shipped"},
        content_type="application/json",
    )
    assert refused.status_code == 409
    assert "order B-1 moved" in refused.json()["detail"]
    assert api.get("/api/review/conflicts").json()["items"][0]["resolution"] is None
    assert Order.objects.get(order_id="B-1").status == "delivered"


# Its refund is issued in the tool's own thread, on a connection of its own, which sees
# only what is committed: rolled back, it finds no order.
@pytest.mark.django_db(transaction=True)
def test_a_double_refund_started_from_the_form_refunds_once(as_owner):
    response = as_owner.post(
        "/runs/new",
        {
            "team": "support-desk",
            "scenario": "double-refund",
            "model": "scripted",
            "allowance": 5000,
            "max_turns": 12,
            "order": "C-9",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    run_id = response.url.rstrip("/").rsplit("/", 1)[-1]
    assert drive(run_id) == "done"
    assert Refund.objects.filter(order_id="C-9").count() == 1
    assert Order.objects.get(order_id="C-9").status == "refunded"


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"team": "repo-fix", "scenario": "first-flight", "order": "A-1"}, "only the support-desk"),
        ({"team": "support-desk", "scenario": "lost-update", "order": "a b"}, "letters, digits"),
        ({"team": "support-desk", "scenario": "lost-update", "order": "-x"}, "starting with a"),
    ],
)
def test_the_form_names_a_bad_order(as_owner, fields, error):
    body = {"model": "scripted", "allowance": 5000, "max_turns": 12, **fields}
    response = as_owner.post("/runs/new", body)
    assert response.status_code == 400 and error in response.content.decode()


@pytest.mark.parametrize(("typed", "order"), [(" A-4471 ", "A-4471"), ("   ", None)])
def test_the_form_takes_an_order_typed_with_spaces_around_it(as_owner, typed, order):
    """A pasted order id with a space at its end was refused as if it held a bad character
    ("letters, digits, '.', '_' and '-' only"), and a box of spaces was not read as empty.
    The spaces around it are dropped, as in the form's other boxes."""
    body = {"model": "scripted", "team": "support-desk", "scenario": "lost-update"}
    response = as_owner.post("/runs/new", {**body, "order": typed})
    assert response.status_code == 302, response.content.decode()[:3000]
    run_id = response.url.rstrip("/").rsplit("/", 1)[-1]
    settings = DjangoJournal().read(f"run-{run_id}")[0].event.config["settings"]
    assert settings["desk"]["order_id"] == order


def test_the_api_refuses_an_order_for_a_team_without_orders(api):
    response = api.post(
        "/api/runs",
        {"team": "repo-fix", "scenario": "first-flight", "order": "A-1"},
        content_type="application/json",
    )
    assert response.status_code == 400 and "works on no orders" in response.json()["detail"]


# Its refund is issued in the tool's own thread, on a connection of its own, which sees
# only what is committed: rolled back, it finds no order.
@pytest.mark.django_db(transaction=True)
def test_a_person_supersedes_the_ticket_through_the_api_and_the_refund_is_refused(api, as_owner):
    from runtime.events import MutationRefused, OrderPrepared
    from services import steps

    response = api.post(
        "/api/runs",
        {"team": "support-desk", "scenario": "double-refund", "order": "C-7"},
        content_type="application/json",
    )
    run_id = response.json()["run_id"]
    journal = DjangoJournal()
    while not any(isinstance(r.event, OrderPrepared) for r in journal.read(f"run-{run_id}")):
        assert steps.drive_step(run_id, "test") == "stepped"

    assert api.get("/api/intents/ticket-nobody").status_code == 404
    intent = api.get("/api/intents/ticket-C-7").json()
    assert intent["version"] == 1 and len(intent["history"]) == 1
    change = {"statement": "no refund: replace the item", "reason": "customer called", "version": 1}
    refused = as_owner.post("/api/intents/ticket-C-7", change, content_type="application/json")
    assert refused.status_code == 403  # superseding is a decision: reviewers only
    # named as what was asked; it said "deciding on review items", which this is not
    assert refused.json() == {"detail": "superseding an intent needs the reviewer permission"}
    done = api.post("/api/intents/ticket-C-7", change, content_type="application/json")
    assert done.status_code == 200, done.content
    assert done.json()["version"] == 2 and done.json()["history"][-1]["by"] == "reviewer"
    # The same supersession sent again is the one decision (tests/dashboard/
    # test_a_supersession_sent_again.py); another on version 1 is refused as moved since.
    again = api.post("/api/intents/ticket-C-7", change, content_type="application/json")
    assert again.status_code == 200 and again.json() == done.json()
    other = {**change, "reason": "customer called again"}
    moved = api.post("/api/intents/ticket-C-7", other, content_type="application/json")
    assert moved.status_code == 409 and "at version 2, not 1" in moved.json()["detail"]
    blank = api.post(
        "/api/intents/ticket-C-7",
        {**change, "version": 2, "reason": "  "},
        content_type="application/json",
    )
    assert blank.status_code == 422  # refused at the body, as a decision's blank reason is
    assert [e["loc"][-1] for e in blank.json()["detail"]] == ["reason"]

    drive(run_id)
    assert not Refund.objects.filter(order_id="C-7").exists()
    rejected = [r.event for r in journal.read_run(run_id) if isinstance(r.event, MutationRefused)]
    assert rejected and all((e.check, e.held, e.current) == ("intent", 1, 2) for e in rejected)
    timeline = api.get(f"/api/runs/{run_id}/events?kind=MutationRefused").json()
    assert timeline and "superseded" in timeline[0]["data"]["reason"]


def test_the_commands_start_a_desk_run_on_an_order_and_supersede_its_ticket(owner):
    import io

    from django.core.management import CommandError, call_command

    out = io.StringIO()
    call_command(
        "start_run",
        "--team",
        "support-desk",
        "--scenario",
        "re-decide",
        "--order",
        "D-1",
        stdout=out,
    )
    run_id = out.getvalue().strip()
    assert drive(run_id) == "done"
    assert Order.objects.get(order_id="D-1").status == "shipped"
    with pytest.raises(CommandError, match="works on no orders"):
        call_command("start_run", "--team", "repo-fix", "--order", "D-1", stdout=io.StringIO())

    args = ["supersede_intent", "ticket-D-1", "--statement", "offer a return", "--by", "ana"]
    with pytest.raises(CommandError, match="at version 1, not 5"):
        call_command(*args, "--reason", "customer called", "--based-on", "5")
    with pytest.raises(CommandError, match="no intent ticket-D-2"):
        call_command("supersede_intent", "ticket-D-2", "--statement", "x", "--reason", "y")
    call_command(*args, "--reason", "customer called", "--based-on", "1", stdout=out)
    assert "ticket-D-1 is now at version 2" in out.getvalue()


def test_a_triage_run_page_shows_its_answer_escaped_and_degraded(as_owner, monkeypatch):
    """Specialists run inline here (the workers would run them as Celery tasks)."""
    from services import runs, specialists

    monkeypatch.setattr(
        specialists,
        "dispatch",
        lambda run, sub, handoff: specialists.run_specialist(run, sub, "inline"),
    )
    run_id = runs.start_run("support-triage", "broken-policy", task="<b>Order B2001</b> broke")
    assert drive(run_id) == "done"
    page = as_owner.get(f"/runs/{run_id}/").content.decode()
    assert "Answer" in page and "degraded" in page
    assert "policy snapshot 2025-05" in page and "KB-104" in page
    assert "<b>Order B2001</b>" not in page and "&lt;b&gt;Order B2001&lt;/b&gt;" in page
