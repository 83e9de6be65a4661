"""The fork page: a form for one event of a run, the fork started and shown, and mistakes
named on the form with nothing written."""

from __future__ import annotations

import html
import re

import pytest

from dashboard import present
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoredEvent
from tests.dashboard.conftest import drive, run_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]


def at(run_id: str, kind: str, tool: str | None = None) -> int:
    return next(
        r.position
        for r in DjangoJournal().read(f"run-{run_id}")
        if r.event.kind == kind and (tool is None or getattr(r.event, "tool", None) == tool)
    )


def number(run_id: str, position: int) -> str:
    """The event's number as the run's timeline shows it."""
    [found] = [r for r in DjangoJournal().read(f"run-{run_id}") if r.position == position]
    return present.number(found.stream, found.version, run_id)


def test_a_fork_from_the_page_starts_a_run_with_its_parent_named(as_owner, owner):
    parent = run_of("first-flight")
    where = at(parent, "ToolReturned", "read_file")
    page = as_owner.get(f"/runs/{parent}/fork?at={where}")
    assert page.status_code == 200 and "ToolReturned" in page.content.decode()
    response = as_owner.post(
        f"/runs/{parent}/fork",
        {"at": where, "to": "coder", "message": "Keep the change small.", "tool_result": '"x"'},
    )
    assert response.status_code == 302
    child = response["Location"].split("/")[2]
    summary = RunSummary.objects.get(run_id=child)
    assert (summary.parent_id, summary.fork_at, summary.started_by) == (parent, where, "owner")
    assert drive(child) != "stepped"


def test_the_event_forked_at_reads_as_its_line_on_the_timeline(as_owner, owner):
    parent = run_of("first-flight")
    where = at(parent, "MessageDelivered")  # a kind whose line is its first fields
    page = as_owner.get(f"/runs/{parent}/fork?at={where}").content.decode()
    assert "orchestrator message_id m-001; recipient orchestrator; duplicate no</p>" in page


@pytest.mark.parametrize(
    ("form", "says"),
    [
        ({"agent": "coder"}, "choose an agent and its backend together"),
        ({"message": "hello"}, "choose who the message is for"),
        # a recipient chosen and nothing to tell them: refused, not forked without a message
        ({"to": "coder"}, "write the message for coder"),
        ({"to": "coder", "message": "   "}, "write the message for coder"),
        ({"tool_result": "{not json"}, "not JSON"),
        # json's decoder recursing past Python's limit was a 500
        ({"tool_result": "[" * 10_000 + "]" * 10_000}, "nested too deeply for JSON to read"),
        ({"tool_result": "[" * 100 + "]" * 100}, "nested deeper than 60 levels"),
        # json's decoder raising a plain ValueError (a whole number past 4,300 digits): a 500
        ({"tool_result": "1" * 5000}, "a whole number longer than 4,300 digits"),
        ({"tool_result": "NaN"}, "NaN and Infinity are not numbers JSON allows"),
        # half a UTF-16 pair, which JSON's escapes can say and no event can hold: a 500
        ({"tool_result": '{"note": "bad \\ud800 here"}'}, "half a UTF-16 surrogate pair"),
        ({"tool_result": '{"\\udfff": 1}'}, "half a UTF-16 surrogate pair"),
        ({"max_turns": "0"}, "greater than or equal to 1"),
        # The new-run form's bounds (dashboard/actions.py), where the fork's allowed 1e9.
        ({"allowance": "10000001"}, "less than or equal to 10000000"),
        ({"max_turns": "5001"}, "less than or equal to 5000"),
        ({"agent": "coder", "backend": "oracle"}, "Select a valid choice"),
        (
            {"agent": "coder", "backend": "scripted", "model_name": "gpt"},
            "a model name is for the OpenAI-compatible endpoint",
        ),
        (
            {"agent": "coder", "backend": "endpoint", "model_name": "two words"},
            "a model name has no spaces or control characters",
        ),
    ],
)
def test_mistakes_are_named_on_the_form_and_nothing_is_written(as_owner, owner, form, says):
    parent = run_of("premature-done")
    where = at(parent, "ToolReturned")
    before = (StoredEvent.objects.count(), RunSummary.objects.count())
    response = as_owner.post(f"/runs/{parent}/fork", {"at": where, **form})
    assert response.status_code == 400 and says in response.content.decode()
    assert (StoredEvent.objects.count(), RunSummary.objects.count()) == before


def test_a_fork_the_record_refuses_says_why_on_the_form(as_owner, owner):
    parent = run_of("premature-done")
    where = at(parent, "ToolDispatched")
    response = as_owner.post(f"/runs/{parent}/fork", {"at": where, "tool_result": "1"})
    assert response.status_code == 400
    assert "fork at a ToolReturned to replace its result" in response.content.decode()


def errors(page: str) -> dict[str, str]:
    """Each refusal on the fork page by where it sits: a box's name, or "" above the form."""
    found = {
        name: html.unescape(re.sub(r"<.*?>", " ", text)).strip()
        for name, text in re.findall(
            r'<ul class="errorlist" [^>]*id="id_(\w+)_error">(.*?)</ul>', page
        )
    }
    above = re.findall(r'<div class="message error" role="alert">(.*?)</div>', page, re.S)
    if above:
        found[""] = html.unescape(re.sub(r"<.*?>", " ", above[0])).strip()
    return found


def test_each_refusal_sits_under_the_box_it_is_about(as_owner, owner, settings):
    settings.MODEL_BASE_URL = ""
    parent = run_of("premature-done")
    returned, dispatched = at(parent, "ToolReturned"), at(parent, "ToolDispatched")
    cases = [
        # (the form, where the refusal should sit, what it says)
        ({"backend": "scripted"}, "agent", "choose an agent and its backend together"),
        ({"agent": "coder"}, "backend", "choose an agent and its backend together"),
        # Refused once, in the box at fault, not also blamed on the pairing.
        ({"agent": "coder", "backend": "oracle"}, "backend", "Select a valid choice"),
        ({"agent": "nobody", "backend": "scripted"}, "agent", "Select a valid choice"),
        ({"to": "nobody", "message": "hi"}, "to", "Select a valid choice"),
        # The service's refusals, in the form's words rather than the API's field names.
        (
            {"agent": "coder", "backend": "endpoint"},
            "backend",
            "no OpenAI-compatible endpoint is configured",
        ),
        (
            {"at": dispatched, "tool_result": "1"},
            "tool_result",
            # By its position and by the number the timeline shows for it.
            f"the event at position {dispatched} (#{number(parent, dispatched)}) is a "
            "ToolDispatched; fork at a ToolReturned",
        ),
        # (A fork at the verdict, which no change could make, is refused in the form's place:
        # tests/dashboard/test_a_fork_starts_only_after_what_the_run_did.py.)
    ]
    before = (StoredEvent.objects.count(), RunSummary.objects.count())
    for form, under, says in cases:
        response = as_owner.post(f"/runs/{parent}/fork", {"at": returned, **form})
        found = errors(response.content.decode())
        assert response.status_code == 400, form
        assert list(found) == [under] and says in found[under], (form, found)
    assert (StoredEvent.objects.count(), RunSummary.objects.count()) == before


def test_a_local_model_that_is_not_there_is_said_under_the_backend(as_owner, owner, monkeypatch):
    from services import local_model

    monkeypatch.setattr(local_model, "unavailable", lambda: "the local model server is down")
    parent = run_of("premature-done")
    response = as_owner.post(
        f"/runs/{parent}/fork",
        {"at": at(parent, "ToolReturned"), "agent": "coder", "backend": "local"},
    )
    assert errors(response.content.decode()) == {"backend": "the local model server is down"}


def test_the_caps_offered_are_the_new_run_forms(as_owner, owner):
    parent = run_of("premature-done")
    page = as_owner.get(f"/runs/{parent}/fork?at={at(parent, 'ToolReturned')}").content.decode()
    new_run = as_owner.get("/runs/new").content.decode()
    for name, bound in (("allowance", 'max="10000000"'), ("max_turns", 'max="5000"')):
        [field] = [f for f in page.split("<input") if f'name="{name}"' in f]
        [new_field] = [f for f in new_run.split("<input") if f'name="{name}"' in f]
        assert bound in field and bound in new_field


def test_the_page_asks_for_an_event(as_owner, owner):
    parent = run_of("premature-done")
    assert "Choose an event of this run" in as_owner.get(f"/runs/{parent}/fork").content.decode()
    assert as_owner.get(f"/runs/{parent}/fork?at=999999").status_code == 400


def test_an_event_the_address_names_and_the_run_has_not_is_named(as_owner, owner):
    """The page said only "Choose an event of this run" to an address naming one it cannot
    take, where the API says why (a position of another run's event, or no number)."""
    parent = run_of("premature-done")
    for asked, why in (
        ("999999", f"at: no event of run {parent} is at position 999999."),
        ("abc", "at: 'abc' is not a position (a whole number, 0 or more)."),
        ("-5", "at: '-5' is not a position (a whole number, 0 or more)."),  # it said position 0
    ):
        page = as_owner.get(f"/runs/{parent}/fork?at={asked}")
        assert page.status_code == 400
        text = html.unescape(page.content.decode())
        assert why in text and "Choose an event of this run to fork at" in text


def test_a_fork_made_on_the_command_line_and_imported_names_its_parents_event(
    as_owner, fly_team, tmp_path, token
):
    """RunForked's `at` is a position of the file the fork was made in; in the store, after
    another run, that position held the other run's event, which the header cited and linked."""
    import shutil

    from django.test import Client

    from journal_store import transfer
    from runtime import cli

    flown = fly_team("first-flight")
    path = tmp_path / "j.jsonl"
    shutil.copy(flown.path, path)
    workspaces = str(flown.workspace.parent)
    assert cli.main(["fork", str(path), "--at", "28", "--workspaces", workspaces]) == 0
    run_of("first-flight")  # the store's first positions are another run's
    with open(path, "rb") as source:
        parent, child = transfer.import_journal(source, by="owner").run_ids
    where = next(r.position for r in DjangoJournal().read(f"run-{parent}") if r.version == 28)
    assert where != 28
    header = as_owner.get(f"/runs/{child}/header").content.decode()
    assert f'href="/runs/{parent}/?tab=timeline&amp;after={where - 1}#e{where}">#28</a>' in header
    forks = as_owner.get(f"/runs/{parent}/header").content.decode()
    assert f'#e{where}">#28</a>' in forks
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert api.get(f"/api/runs/{child}").json()["fork_at"] == where


def test_a_fork_imported_without_its_parent_does_not_link_to_it(as_owner, fly_team, tmp_path):
    """The header linked the parent's id and "compare with its parent": both 404 and 400."""
    import json
    import shutil

    from journal_store import transfer
    from runtime import cli

    flown = fly_team("first-flight")
    path = tmp_path / "j.jsonl"
    shutil.copy(flown.path, path)
    workspaces = str(flown.workspace.parent)
    assert cli.main(["fork", str(path), "--at", "28", "--workspaces", workspaces]) == 0
    lines = path.read_text().splitlines()
    child = json.loads(lines[-1])["run_id"]
    alone = tmp_path / "fork.jsonl"
    alone.write_text("".join(x + "\n" for x in lines if json.loads(x)["run_id"] == child))
    with open(alone, "rb") as source:
        transfer.import_journal(source, by="owner")
    header = as_owner.get(f"/runs/{child}/header").content.decode()
    assert f'Forked from <span class="mono">{flown.run_id}</span>, a run this store' in header
    assert f"/runs/{flown.run_id}/" not in header and "compare with its parent" not in header
