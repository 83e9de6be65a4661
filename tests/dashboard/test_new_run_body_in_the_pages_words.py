"""`POST /api/runs` refuses a blank or unknown team and an order id that is none as the
new-run form does: a 422 naming the field in the page's sentence, where a blank team was a 400
"unknown team ''", an unknown one the service's 400 "unknown team 'nope'" (and the form said
Django's "Select a valid choice"), and a bad order got pydantic's "String should match pattern
'^[A-Za-z0-9]...'". A blank order is no order, as on the page (a fresh order for the run)."""

from __future__ import annotations

import pytest

from dashboard import actions
from journal_store.models import RunSummary, StoredEvent

pytestmark = pytest.mark.django_db


def refused(api, body) -> dict:
    answer = api.post("/api/runs", body, content_type="application/json")
    assert answer.status_code == 422, answer.content
    assert StoredEvent.objects.count() == 0
    return {tuple(e["loc"]): e["msg"] for e in answer.json()["detail"]}


@pytest.mark.parametrize("team", ["", "  "])
def test_a_blank_team_is_a_422_naming_the_field(api, team):
    said = refused(api, {"team": team})
    assert said == {("body", "team"): actions.blank_team()}
    assert "name one of repo-fix" in said[("body", "team")]


@pytest.mark.parametrize("team", ["nope", "Repo-Fix", "repo-fix ", "t" * 10_000])
def test_an_unknown_team_is_a_422_naming_the_field_and_the_teams(api, team):
    said = refused(api, {"team": team})
    assert said == {("body", "team"): actions.team_refusal(team)}
    why = said[("body", "team")]
    assert why.startswith(f"{team[:40]!r}"[:-1]) and " is no team here: name one of " in why
    assert why.endswith("repo-fix, solo, support-desk, support-triage")
    assert len(why) < 200  # a huge name is not repeated whole


@pytest.mark.parametrize("team", ["", "nope", "t" * 10_000])
def test_the_form_says_the_same_of_a_team(as_owner, team):
    page = as_owner.post("/runs/new", {"team": team, "scenario": "solo-fix"})
    assert page.status_code == 400
    why = actions.team_refusal(team)
    assert why and why.replace("'", "&#x27;") in page.content.decode()
    assert "Select a valid choice" not in page.content.decode()
    assert StoredEvent.objects.count() == 0


def test_the_start_run_command_says_the_same_of_a_team():
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError) as refused_by:
        call_command("start_run", "--team", "nope")
    assert str(refused_by.value) == f"--team: {actions.team_refusal('nope')}"
    assert StoredEvent.objects.count() == 0


@pytest.mark.parametrize("order", ["../x", "-x", "x" * 41])
def test_an_order_that_is_no_order_id_is_refused_in_the_pages_words(api, order):
    said = refused(api, {"team": "support-desk", "order": order})
    assert said == {("body", "order"): actions.ORDER_REFUSAL}


def test_a_blank_order_is_a_fresh_one_as_on_the_page(api):
    answer = api.post(
        "/api/runs", {"team": "support-desk", "order": " "}, content_type="application/json"
    )
    assert answer.status_code == 201, answer.content
    assert RunSummary.objects.get(run_id=answer.json()["run_id"]).team == "support-desk"


def test_the_page_says_the_same_of_an_order(as_owner):
    page = as_owner.post("/runs/new", {"team": "support-desk", "order": "../x"})
    assert actions.ORDER_REFUSAL.replace("'", "&#x27;") in page.content.decode()


def test_the_form_asked_by_its_address_for_a_team_not_here_says_so(as_owner):
    """`/runs/new?team=nope` drew the repo-fix form as if repo-fix had been asked for."""
    page = as_owner.get("/runs/new?team=nope")
    assert page.status_code == 400
    text = page.content.decode()
    why = f"{actions.team_refusal('nope')}; the form is drawn for repo-fix"
    assert f"<strong>team</strong>: {why.replace(chr(39), '&#x27;')}" in text
    assert 'id="new-run"' in text and "Start the run" in text  # the form, to go on from
    for asked in ("", "?team=solo", "?team=solo&scenario=first-flight"):
        # Its own choices, and a scenario of the team chosen before (drawn again for a new
        # team, the form is asked with it): the form, as before.
        answer = as_owner.get(f"/runs/new{asked}", HTTP_HX_REQUEST="true")
        assert answer.status_code == 200, asked
        assert "does not offer" not in answer.content.decode()


def test_the_api_body_takes_the_fields_the_form_asks_for():
    # The README says POST /api/runs takes the form's fields: a field added to one and not the
    # other fails here (presets_of and sent_from are the form's own bookkeeping, not choices:
    # the API's key is its Idempotency-Key header).
    from dashboard.api.run_schemas import RunIn
    from dashboard.forms import NewRunForm

    asked = set(NewRunForm.base_fields) - {"presets_of", "sent_from"}
    assert asked == set(RunIn.model_fields)


@pytest.mark.parametrize("scenario", ["nope", "Solo-Fix", "solo-fix "])
def test_a_scenario_the_team_has_not_is_a_422_naming_the_field_and_its_scenarios(api, scenario):
    """It was the plan's 400 about the request as a whole, with no field to point at."""
    said = refused(api, {"team": "solo", "scenario": scenario})
    why = said[("body", "scenario")]
    assert " is no scenario of solo: solo-fix" in why and len(why) < 200


def test_the_start_run_command_says_the_same_of_a_scenario():
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError) as refused_by:
        call_command("start_run", "--team", "solo", "--scenario", "nope")
    assert str(refused_by.value) == "--scenario: 'nope' is no scenario of solo: solo-fix"
    assert StoredEvent.objects.count() == 0
