"""A conflict's card says what its fact holds now, read from the conflict's commit target (the
desk's order, or the journal's fact), and warns when it moved since the conflict was parked."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from desk.services import TableOrders
from journal_store.journal import DjangoJournal
from journal_store.models import Conflict
from runtime.coordination.facts import Facts
from runtime.events import ConflictParked
from services import review, runs
from tests.dashboard.conftest import drive
from tests.dashboard.polls import park

pytestmark = pytest.mark.django_db


def card_of(client, subject: str) -> str:
    page = html.unescape(client.get("/review/conflicts").content.decode())
    start = page.index(f"{subject} · ")
    return page[start : page.index("</section>", start)]


def test_a_desk_conflict_shows_the_orders_status_and_version_and_warns_once_it_moved(
    as_reviewer,
):
    run_id = runs.start_run("support-desk", "lost-update", by="owner", desk={"order_id": "M-1"})
    assert drive(run_id) == "escalated"
    card = card_of(as_reviewer, "order:M-1")
    assert 'is <strong class="mono">"shipped"</strong> at version 2, set by order-agent.' in card
    assert 'badge failed">moved' not in card

    TableOrders(DjangoJournal()).set_status("M-1", "delivered", 2, "courier")
    card = card_of(as_reviewer, "order:M-1")
    assert '"delivered"</strong> at version 3, set by courier.' in card
    assert (
        "It was at version 2 when the conflict was parked: committing a claim now is refused"
        in card
    )
    assert "current value" not in card  # neither claim is what the order holds now


def test_a_decided_conflict_no_longer_says_what_committing_would_do(as_reviewer):
    """Once decided, the card says what was done; the sentence about what committing a claim
    would do (from version 2, refused if it moved) stayed under it, of a choice gone by."""
    run_id = runs.start_run("support-desk", "lost-update", by="owner", desk={"order_id": "M-2"})
    assert drive(run_id) == "escalated"
    assert "Committing a claim sets the status of order M-2" in card_of(as_reviewer, "order:M-2")
    (conflict,) = Conflict.objects.filter(run_id=run_id)
    review.resolve(conflict.conflict_id, "none", "reviewer", "neither is known yet")
    page = html.unescape(as_reviewer.get("/review/conflicts?status=all").content.decode())
    card = page[page.index("order:M-2 · ") :]
    card = card[: card.index("</section>")]
    assert "Resolved by reviewer" in card and "Committing a claim" not in card


def test_a_journal_fact_conflict_shows_the_facts_value_and_none_when_nothing_holds_it(
    as_reviewer,
):
    Facts(DjangoJournal()).write("doc:readme", "owner", "coder", 0, "coder")
    for subject in ("doc:readme", "doc:nowhere"):
        claims = [
            {"claim_id": f"{subject}-a", "value": "coder", "agent": "coder"},
            {"claim_id": f"{subject}-b", "value": "reviewer", "agent": "reviewer"},
        ]
        review.park(
            ConflictParked(
                run_id="r-x",
                conflict_id=f"c-{subject}",
                subject=subject,
                predicate="owner",
                conflict_type="value",
                claims=claims,
            )
        )
    card = card_of(as_reviewer, "doc:readme")
    assert 'is <strong class="mono">"coder"</strong> at version 1, set by coder.' in card
    assert card.count('class="badge current"') == 1
    assert "Now:" not in card_of(as_reviewer, "doc:nowhere")


def test_the_api_gives_what_the_fact_holds_now_as_the_card_does(as_reviewer, token):
    """The card warns when the order moved since the conflict was parked; the API gave no
    current value, so a script learned it only by having its decision refused."""
    run_id = runs.start_run("support-desk", "lost-update", by="owner", desk={"order_id": "M-3"})
    assert drive(run_id) == "escalated"
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")

    def listed():
        [item] = api.get("/api/review/conflicts", {"run": run_id}).json()["items"]
        return item

    item = listed()
    assert item["current"] == {"value": "shipped", "version": 2, "by": "order-agent", "known": True}
    assert item["commit"]["version"] == 2
    TableOrders(DjangoJournal()).set_status("M-3", "delivered", 2, "courier")
    assert "It was at version 2 when the conflict" in card_of(as_reviewer, "order:M-3")
    assert listed()["current"] == {
        "value": "delivered",
        "version": 3,
        "by": "courier",
        "known": True,
    }


def test_a_claim_on_a_fact_not_yet_set_is_based_on_version_0_not_on_a_question_mark(
    as_reviewer,
):
    # Two agents setting a fact nobody had set: both read version 0 (a conflict's card said
    # "Based on version ?", as for a claim that does not say).
    claims = [
        {"claim_id": "c-1", "agent": "a", "value": "shipped", "based_on": 0},
        {"claim_id": "c-2", "agent": "b", "value": "cancelled"},
    ]
    park("r-0000000000a1", "cf-first", claims)
    card = card_of(as_reviewer, "order:cf-first")
    based = re.findall(r"<dt>Based on version</dt><dd>([^<]*)</dd>", card)
    assert based == ["0", "?"]


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        (
            "state",
            "A state conflict. The rule for its kind (fetch the authoritative state; then the "
            "authority ranking) could not choose between these claims",
        ),
        ("verification", "A verification conflict: independent adjudication: a person decides."),
        ("value", "A value conflict: no rule settles this kind, so a person does."),
    ],
)
def test_a_conflict_card_says_why_it_waits_for_a_person_in_words(kind, said):
    """It read "A state conflict: fetch the authoritative state; then the authority ranking;
    no rule decided this one." (and "no policy: a person decides; no rule decided this one")."""
    from dashboard.templatetags.minutes import conflict_why

    assert conflict_why(kind).startswith(said)
