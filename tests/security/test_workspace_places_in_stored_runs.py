"""Journals coming into the store, and runs already in it, cannot point a worker at another
place on disk: import refuses such settings naming the line and the field, a renamed import
gets its own workspace, and a stored run that names another run's workspace is not resumed or
driven."""

from __future__ import annotations

import io
import json

import pytest

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import StoredEvent
from journal_store.transfer import ImportRefused, import_journal
from runtime import flight
from runtime.events import TeamStarted
from services import steps
from tests.dashboard.conftest import client_for, make_user
from tests.security.sandboxing import files_under, victim
from tests.tasks.conftest import use_broker

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_broker(settings, tmp_path):
    use_broker("memory://", {})
    settings.WORKSPACES = tmp_path / "workspaces"
    yield
    use_broker(settings.CELERY_BROKER_URL, settings.CELERY_BROKER_TRANSPORT_OPTIONS)


def started(run_id: str, **changes) -> dict:
    config = flight.plan("repo-fix", "first-flight", run_id, started_by="owner")
    config = config.model_dump(mode="json")
    for name, value in changes.items():  # a change to the team's own setting goes under settings
        (config if name in config else config["settings"])[name] = value
    return {
        "kind": "TeamStarted",
        "v": TeamStarted.v,
        "run_id": run_id,
        "team": "repo-fix",
        "scenario": "first-flight",
        "task": "t",
        "config": config,
    }


def upload(*lines: dict, **options):
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    return import_journal(io.BytesIO(data), size=len(data), **options)


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("workspace", "../../../some/dir", "config.workspace"),
        ("template", "../../config", "config.settings.template"),
    ],
)
def test_an_import_whose_settings_climb_out_is_refused_naming_the_line_and_field(
    field, value, named
):
    with pytest.raises(ImportRefused) as refused:
        upload(started("r-evil", **{field: value}))
    assert f"line 1: field '{named}'" in str(refused.value)
    assert StoredEvent.objects.count() == 0


def test_a_renamed_import_works_in_its_own_workspace_not_its_originals():
    upload(started("r-original"), run_id="r-copy")
    events = [r.event for r in DjangoJournal().read("run-r-copy")]
    assert events[0].config["workspace"] == "r-copy.workspace"
    assert flight.recorded_config(events, "r-copy").workspace == "r-copy.workspace"


def test_a_stored_run_naming_another_runs_workspace_is_neither_resumed_nor_driven(settings):
    theirs = victim(settings.WORKSPACES / "r-victim.workspace")
    event = TeamStarted.model_validate(
        {
            k: v
            for k, v in started("r-evil", workspace="r-victim.workspace").items()
            if k not in ("kind", "v")
        }
    )
    DjangoJournal().append("run-r-evil", [event], 0)  # as stored before settings were checked
    projection.catch_up()
    stored = StoredEvent.objects.count()
    owner = client_for(make_user("owner"))
    response = owner.post(
        "/api/runs/r-evil/resume", {"reason": "go"}, content_type="application/json"
    )
    assert response.status_code == 409
    assert "field 'workspace'" in response.json()["detail"]
    assert "not this run's workspace" in response.json()["detail"]
    # The step parks it for a person, naming the field, and writes nothing else.
    assert steps.drive_step("r-evil", "test") == "dead-lettered"
    assert StoredEvent.objects.count() == stored + 1
    [letter] = StoredEvent.objects.filter(stream="control-r-evil")
    assert letter.kind == "DeadLettered"
    assert "field 'workspace'" in letter.data
    assert files_under(theirs) == {"precious.txt": b"not yours\n"}
