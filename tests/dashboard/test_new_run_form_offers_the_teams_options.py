"""The new-run form offers the chosen team's options only: the baseline and reflection for
repo-fix, the order for the support desk, votes for the teams that take them. The others are
drawn hidden (a stylesheet in <noscript> shows them where the form cannot be drawn again), and
the server refuses them as before; a refused one shows with its error."""

from __future__ import annotations

import re

import pytest

from journal_store.models import StoredEvent

pytestmark = pytest.mark.django_db

OPTIONS = ("order", "baseline", "reflect", "votes")


def shown(html: str) -> dict[str, bool]:
    """Each team option's field: whether it is offered (not drawn hidden)."""
    found = {}
    for name in OPTIONS:
        div = re.search(rf'<div class="field( not-offered)?">\s*<label for="id_{name}"', html)
        assert div, name
        found[name] = div.group(1) is None
    return found


def test_each_team_is_offered_its_own_options(as_owner):
    repo_fix = as_owner.get("/runs/new").content.decode()
    assert shown(repo_fix) == {"order": False, "baseline": True, "reflect": True, "votes": True}
    desk = as_owner.get("/runs/new?team=support-desk").content.decode()
    assert shown(desk) == {"order": True, "baseline": False, "reflect": False, "votes": True}
    triage = as_owner.get("/runs/new?team=support-triage").content.decode()
    assert shown(triage) == {"order": False, "baseline": False, "reflect": False, "votes": False}
    assert '<noscript><link rel="stylesheet" href="/static/noscript.css"></noscript>' in desk


def test_a_choice_the_new_team_refuses_is_not_carried_over_unseen(as_owner):
    # Drawn again for the desk after reflection was ticked for repo-fix (htmx sends the form).
    desk = as_owner.get("/runs/new?team=support-desk&reflect=on&order=A-1").content.decode()
    [reflect] = re.findall(r'<input type="checkbox" name="reflect"[^>]*>', desk)
    assert "checked" not in reflect
    assert 'name="order" value="A-1"' in desk
    # A tick the team takes stays when the form is drawn again for another scenario.
    again = as_owner.get("/runs/new?team=repo-fix&scenario=reject-loop&baseline=on").content
    [baseline] = re.findall(r'<input type="checkbox" name="baseline"[^>]*>', again.decode())
    assert "checked" in baseline


def test_an_option_the_team_refuses_is_refused_and_shown_with_its_error(as_owner):
    before = StoredEvent.objects.count()
    body = {
        "team": "support-desk",
        "scenario": "lost-update",
        "model": "scripted",
        "baseline": "on",
    }
    response = as_owner.post("/runs/new", body)
    assert response.status_code == 400
    page = response.content.decode()
    assert "team support-desk works on no repository template" in page
    assert shown(page)["baseline"] is True and shown(page)["reflect"] is False
    assert StoredEvent.objects.count() == before


def test_the_ceiling_says_what_it_does(as_owner):
    page = as_owner.get("/runs/new").content.decode()
    help_text = 'id="id_max_seconds_helptext">Seconds from the run&#x27;s start; at the first turn'
    assert help_text in page


def test_an_order_typed_for_the_desk_is_not_kept_unseen_for_another_team(as_owner):
    """The form drawn again keeps what is typed in its task and order (hx-preserve), but not
    an order once another team is chosen: htmx kept the desk's box, hidden, and the run was
    refused with "only the support-desk team works on orders" on a box nobody could see."""
    order = r'<input type="text" name="order"[^>]*>'
    desk = as_owner.get("/runs/new?team=support-desk&order=A-1").content.decode()
    [box] = re.findall(order, desk)
    assert "hx-preserve" in box and 'value="A-1"' in box
    repo_fix = as_owner.get("/runs/new?team=repo-fix&order=A-1&task=mine").content.decode()
    [box] = re.findall(order, repo_fix)
    assert "hx-preserve" not in box and "value=" not in box
    [task] = re.findall(r"<textarea[^>]*name=\"task\"[^>]*>", repo_fix)
    assert "hx-preserve" in task
