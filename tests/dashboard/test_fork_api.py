"""Forking a stored run from the API: the fork is driven by the workers like any run, records
its parent and fork point, and a fork that cannot be made says why and writes nothing."""

from __future__ import annotations

import html

import pytest

from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoredEvent
from runtime import compare, flight
from tests.dashboard.conftest import drive, run_of
from tests.dashboard.test_metrics_page import FIXTURES

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]


def position(run_id: str, kind: str, tool: str | None = None) -> int:
    return next(
        r.position
        for r in DjangoJournal().read(f"run-{run_id}")
        if r.event.kind == kind and (tool is None or getattr(r.event, "tool", None) == tool)
    )


def test_a_fork_from_the_api_goes_on_from_its_parents_past(as_owner, owner):
    parent = run_of("first-flight")
    at = position(parent, "ToolReturned", "read_file")
    response = as_owner.post(
        f"/api/runs/{parent}/fork",
        {"at": at, "message": {"agent": "coder", "text": "Keep it small."}},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    child = response.json()
    assert (child["parent_id"], child["fork_at"]) == (parent, at)
    assert child["started_by"] == "owner"
    # Its own start, not its parent's (its copied past keeps the parent's timestamps).
    forked = next(
        r.event
        for r in DjangoJournal().read(f"run-{child['run_id']}")
        if r.event.kind == "RunForked"
    )
    started = RunSummary.objects.get(run_id=child["run_id"]).started_at
    assert started.timestamp() == pytest.approx(forked.t)
    assert started > RunSummary.objects.get(run_id=parent).started_at
    assert drive(child["run_id"]) != "stepped"
    assert RunSummary.objects.get(run_id=child["run_id"]).status == "done"
    journal = DjangoJournal()
    a = flight.run_records(journal, parent)
    b = flight.run_records(journal, child["run_id"])
    assert compare.compare(a, b).identical  # the scripted coder takes no advice
    assert flight.replay(journal, child["run_id"]).identical


def nested(levels: int) -> list:
    """An array `levels` deep."""
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"at": 10**9}, 422, ""),  # no event there (test_a_forks_at_is_refused_...)
        ({"at": "@verdict"}, 400, "is the run's verdict"),
        ({"at": "@read", "tool_result": {"x": 1}}, 400, "fork at a ToolReturned"),
        ({"at": "@read", "models": {"coder": "oracle"}}, 422, ""),
        ({"at": "@read", "message": {"agent": "coder", "text": ""}}, 422, ""),
        ({"at": "@read", "message": {"agent": "coder", "text": " \n "}}, 422, ""),
        # whole numbers as numbers, as a new run's body takes them
        ({"at": "@read", "allowance": "5000"}, 422, ""),
        ({"at": "@read", "max_turns": 5.0}, 422, ""),
        ({"at": 10**30}, 422, ""),  # past any position a column holds
        ({"at": "@read", "max_turns": 5_001}, 422, ""),
        ({"at": "@read", "allowance": 10_000_001}, 422, ""),  # the new run's bound, not 1e9
        ({"at": "@read", "models": {"coder": "endpoint:has space"}}, 422, ""),
        (
            {"at": "@read", "models": {"coder": "zi:clever"}},
            400,
            "a model name is for the endpoint",
        ),
        # refused here, not dead-lettered after three failed steps
        (
            {"at": "@read", "models": {"coder": "endpoint"}},
            400,
            "models: no OpenAI-compatible endpoint is configured",
        ),
        # A result the journal cannot keep as given: nested past what an event's JSON holds
        # (a 500) or an import takes, or a number JSON has not (stored as null).
        (
            {"at": "@returned", "tool_result": nested(250)},
            400,
            "tool_result: nested deeper than 60 levels",
        ),
        ({"at": "@returned", "tool_result": nested(61)}, 400, "nested deeper than 60"),
        # Written, and then readable by no projector: every page answered 500 from then on.
        ({"at": "@returned", "tool_result": nested(200)}, 400, "nested deeper than 60"),
        ({"at": "@returned", "tool_result": float("nan")}, 400, "NaN and Infinity"),
        ({"at": "@returned", "tool_result": {"x": float("inf")}}, 400, "NaN and Infinity"),
        # Half a UTF-16 pair, which JSON's escapes can say and no event can hold: it was a 500.
        ({"at": "@returned", "tool_result": {"note": "bad \ud800 here"}}, 422, ""),
        ({"at": "@returned", "tool_result": {"\udfff": 1}}, 422, ""),
        ({"at": "@read", "message": {"agent": "coder", "text": "\udc00"}}, 422, ""),
        (  # with a model name for it too (it was forked, and its step failed three times)
            {"at": "@read", "models": {"coder": "endpoint:big-model"}},
            400,
            "models: no OpenAI-compatible endpoint is configured",
        ),
    ],
)
def test_a_fork_that_cannot_be_made_says_why_and_writes_nothing(
    as_owner, body, status, says, settings
):
    settings.MODEL_BASE_URL = ""
    parent = run_of("first-flight")
    marks = {
        "@verdict": position(parent, "TeamFinished"),
        "@read": position(parent, "ToolDispatched", "read_file"),
        "@returned": position(parent, "ToolReturned", "read_file"),
    }
    body = {**body, "at": marks.get(body["at"], body["at"])}
    before = (StoredEvent.objects.count(), RunSummary.objects.count())
    response = as_owner.post(f"/api/runs/{parent}/fork", body, content_type="application/json")
    assert response.status_code == status, response.content
    if says:
        assert says in response.json()["detail"]
    assert (StoredEvent.objects.count(), RunSummary.objects.count()) == before


def test_no_fork_of_a_run_that_is_not_there(as_owner):
    response = as_owner.post("/api/runs/r-nope/fork", {"at": 1}, content_type="application/json")
    assert response.status_code == 404


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"at": "x"}, "at"),
        ({"at": "@read", "max_turns": 0}, "max_turns"),
        ({"at": "@read", "message": {"agent": "coder", "text": ""}}, "message"),
        ({"at": "@read", "colour": "red"}, "colour"),
    ],
)
def test_a_forks_422_points_at_the_bodys_field(as_owner, body, field):
    """It pointed at ["body", "body", <field>]: django-ninja reads the body as an object held
    under the parameter's name. The body a client sends is read as before."""
    parent = run_of("first-flight")
    body = {
        **body,
        "at": position(parent, "ToolDispatched", "read_file")
        if body["at"] == "@read"
        else body["at"],
    }
    response = as_owner.post(f"/api/runs/{parent}/fork", body, content_type="application/json")
    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert error["loc"][:2] == ["body", field], error


AT_AS_THE_PAGE_HAS_IT = [
    (-1, "-1"),
    (1.5, "1.5"),
    (True, "true"),
    (None, "null"),
    (0, "0"),
    (10**9, "1000000000"),
    (10**30, "1" + "0" * 30),
    (2**62 + 1, str(2**62 + 1)),
]


def test_a_forks_at_is_refused_in_the_fork_pages_words(as_owner):
    """A 422 at ["body", "at"] saying what the fork page says of the same `at`, where it was
    pydantic's ("Input should be a valid integer", "greater than or equal to 1", "less than
    or equal to 4611686018427387904") or, for a position no event is at, the service's 400.
    JSON's "5" is text, not the whole number a position is (as a new run's numbers are)."""
    parent = run_of("premature-done")
    before = (StoredEvent.objects.count(), RunSummary.objects.count())
    said = {}
    for at in [*(at for at, _ in AT_AS_THE_PAGE_HAS_IT), "5", "x"]:
        response = as_owner.post(
            f"/api/runs/{parent}/fork", {"at": at}, content_type="application/json"
        )
        assert response.status_code == 422, (at, response.content)
        [error] = response.json()["detail"]
        assert error["loc"] == ["body", "at"], at
        said[repr(at)] = error["msg"]
    for at, typed in AT_AS_THE_PAGE_HAS_IT:
        page = as_owner.get(f"/runs/{parent}/fork?at={typed}")
        assert page.status_code == 400
        text = html.unescape(page.content.decode())
        assert f"at: {said[repr(at)]}. Choose an event" in text, at
    assert said[repr("5")] == "'\"5\"' is not a position (a whole number, 0 or more)"
    assert said[repr(10**9)] == f"no event of run {parent} is at position 1000000000"
    assert (StoredEvent.objects.count(), RunSummary.objects.count()) == before


def test_a_run_whose_settings_do_not_validate_is_not_forked_saying_so_as_its_replay_does(
    as_owner, owner
):
    """Forked, an imported run whose TeamStarted names no backend for an agent was a 400 with
    pydantic's dump ("1 validation error for FlightConfig ... https://errors.pydantic.dev/"),
    where its replay and its baseline answer 409 naming the field."""
    import io
    import json

    from journal_store import projection
    from journal_store.transfer import import_journal

    lines = (FIXTURES / "repo-fix.v1.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["config"]["models"] = {"coder": "bogus"}
    source = "\n".join([json.dumps(first), *lines[1:]]).encode()
    [run_id] = import_journal(io.BytesIO(source), name="bogus.jsonl", by="owner").run_ids
    projection.catch_up()
    before = StoredEvent.objects.count()
    at = position(run_id, "ToolReturned")
    forked = as_owner.post(f"/api/runs/{run_id}/fork", {"at": at}, content_type="application/json")
    replayed = as_owner.post(f"/api/runs/{run_id}/replay")
    assert (forked.status_code, replayed.status_code) == (409, 409), forked.content
    said = forked.json()["detail"]
    assert said == replayed.json()["detail"]
    assert said.startswith(
        f"run {run_id}: unreadable settings in TeamStarted: field 'models.coder'"
    )
    assert "pydantic" not in said
    baseline = as_owner.post(f"/api/runs/{run_id}/baseline")
    assert (baseline.status_code, baseline.json()["detail"]) == (409, said)
    page = as_owner.post(
        f"/runs/{run_id}/fork", {"at": at, "agent": "coder", "backend": "scripted"}
    )
    assert page.status_code == 409 and html.escape(said) in page.content.decode()
    assert StoredEvent.objects.count() == before
