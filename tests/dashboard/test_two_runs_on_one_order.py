"""Two runs of the desk's lost-update on one order: the claims stream `claims-order:<id>` is
the order's, shared by the runs on it, so the second run's conflict holds the first run's two
claims beside its own (Claims.reconcile reads every live claim on the fact). Each claim's label
names its run, and a claim that another conflict's ruling settled after this conflict was
parked is not offered again: choosing it is refused (409), and the ruling settles only the
claims still open. The second conflict offered all four claims, "commit "shipped" (claimed by
order-agent)" twice with nothing telling them apart, and still offered them once the first
conflict was decided."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from desk.models import Order
from journal_store.journal import DjangoJournal
from runtime.coordination.claims import Claims
from runtime.events import ClaimsReconciled
from services import review
from tests.dashboard.conftest import claim_of, two_runs

pytestmark = pytest.mark.django_db


def card(client, conflict_id: str) -> str:
    return card_of(client, conflict_id, "A-77")


def card_of(client, conflict_id: str, order: str) -> str:
    answer = client.get(f"/review/conflicts?q={order}")
    assert answer.status_code == 200
    page = html.unescape(answer.content.decode())
    start = page.index(f'id="{conflict_id}"')
    return page[start : page.index("</section>", start)]


def offered(card_html: str) -> dict[str, str]:
    """The form's choices: the radio's value, and its label's words."""
    found = re.findall(r'name="choice" value="([^"]+)" required>(.*?)</label>', card_html)
    return {
        value: re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", label)).strip() for value, label in found
    }


def test_the_second_runs_conflict_names_each_claims_run_and_drops_what_was_decided(
    as_reviewer,
):
    first, second = two_runs("A-77")
    theirs = {claim_of(first, "shipped"), claim_of(first, "cancelled")}
    assert theirs <= {c["claim_id"] for c in second.claims}  # the order's claims are shared

    choices = offered(card(as_reviewer, second.conflict_id))
    assert len(choices) == 4
    assert len(set(choices.values())) == 4  # no two labels alike
    for claim in second.claims:
        run = claim["run_id"]
        assert f"in run {run}" in choices[claim["claim_id"]]
    assert choices[claim_of(second, "shipped")] == (
        f'commit "shipped" (claimed by order-agent in run {second.run_id}, this one; '
        "the current value)"
    )

    # The first conflict decided: its claims are settled on the order's stream, and the
    # second conflict offers only its own two now, showing the others as settled.
    reply = as_reviewer.post(
        f"/review/conflicts/{first.conflict_id}/resolve",
        {"choice": "none", "reason": "the customer will be called"},
    )
    assert reply.status_code == 302
    now = card(as_reviewer, second.conflict_id)
    assert set(offered(now)) == {claim_of(second, "shipped"), claim_of(second, "cancelled")}
    assert now.count('<span class="badge">settled</span>') == 2
    words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", now))
    assert f"settled since this conflict was parked, by a ruling in run {first.run_id}" in words

    # A page drawn before the decision still has the radio: choosing that claim is refused.
    refused = as_reviewer.post(
        f"/review/conflicts/{second.conflict_id}/resolve",
        {"choice": claim_of(first, "shipped"), "reason": "it shipped"},
        HTTP_HX_REQUEST="true",
    )
    assert refused.status_code == 409
    said = html.unescape(refused.content.decode())
    assert f"by order-agent in run {first.run_id}) was settled since this conflict was" in said
    assert "choose another claim or “reject both”" in said


def test_the_api_marks_claims_another_ruling_settled_and_offers_only_the_rest(as_reviewer, token):
    first, second = two_runs("A-77")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")

    def listed() -> dict:
        [item] = api.get("/api/review/conflicts", {"run": second.run_id}).json()["items"]
        return item

    ours = [claim_of(second, "shipped"), claim_of(second, "cancelled")]
    theirs = [claim_of(first, "shipped"), claim_of(first, "cancelled")]
    item = listed()
    assert sorted(item["choices"]) == sorted([*theirs, *ours, "none"])
    assert all(c["settled"] is None for c in item["claims"])

    reply = api.post(
        f"/api/review/conflicts/{first.conflict_id}/resolve",
        {"choice": theirs[0], "reason": "the carrier scanned it"},
        content_type="application/json",
    )
    assert reply.status_code == 200
    item = listed()
    assert len(item["claims"]) == 4  # the record keeps them
    assert sorted(item["choices"]) == sorted([*ours, "none"])
    settled = {c["claim_id"]: c["settled"] for c in item["claims"]}
    assert settled[ours[0]] is None and settled[ours[1]] is None
    assert settled[theirs[0]]["run_id"] == first.run_id and settled[theirs[0]]["won"]
    assert settled[theirs[1]]["run_id"] == first.run_id and not settled[theirs[1]]["won"]

    refused = api.post(
        f"/api/review/conflicts/{second.conflict_id}/resolve",
        {"choice": theirs[1], "reason": "she asked first"},
        content_type="application/json",
    )
    assert refused.status_code == 409
    assert "choose another claim or reject both (choice 'none')" in refused.json()["detail"]

    # Rejecting both closes it, and settles the claims still open: its own two.
    reply = api.post(
        f"/api/review/conflicts/{second.conflict_id}/resolve",
        {"choice": "none", "reason": "decided on the first run's conflict"},
        content_type="application/json",
    )
    assert reply.status_code == 200
    decisions = [
        r.event
        for r in DjangoJournal().read("claims-order:A-77")
        if isinstance(r.event, ClaimsReconciled)
    ]
    assert sorted(decisions[-1].losers) == sorted(ours)


def rejected_meanwhile(monkeypatch, conflict_id: str) -> None:
    """Another reviewer rejects both claims of `conflict_id` while the next ruling is between
    its check of which claims were settled and its write (tests/coordination/
    test_a_claim_settled_during_a_ruling.py has the same on both databases)."""
    real = review.decide
    pending = [conflict_id]

    def decide(*args, **kwargs):
        if pending:
            review.resolve(pending.pop(), review.NONE, "bea", "neither")
        return real(*args, **kwargs)

    monkeypatch.setattr(review, "decide", decide)


def test_a_claim_settled_while_it_was_being_chosen_is_refused_on_the_page(as_reviewer, monkeypatch):
    first, second = two_runs("A-78")
    chosen = claim_of(first, "cancelled")
    version = Order.objects.get(order_id="A-78").version
    rejected_meanwhile(monkeypatch, second.conflict_id)
    refused = as_reviewer.post(
        f"/review/conflicts/{first.conflict_id}/resolve",
        {"choice": chosen, "reason": "she asked first"},
        HTTP_HX_REQUEST="true",
    )
    assert refused.status_code == 409
    said = html.unescape(refused.content.decode())
    assert f"claim {chosen} ('cancelled' by support-agent in run {first.run_id}) was" in said
    assert f"settled since this conflict was parked, by a ruling in run {second.run_id}" in said
    assert "choose another claim or “reject both”" in said
    decisions = [
        r.event
        for r in DjangoJournal().read("claims-order:A-78")
        if isinstance(r.event, ClaimsReconciled) and chosen in (r.event.winner, *r.event.losers)
    ]
    assert [(d.run_id, d.winner) for d in decisions] == [(second.run_id, "none")]
    assert DjangoJournal().version(f"conflict-{first.conflict_id}") == 1
    assert Order.objects.get(order_id="A-78").version == version  # nothing committed


def test_a_claim_settled_while_it_was_being_chosen_is_a_409_in_the_api(
    as_reviewer, token, monkeypatch
):
    first, second = two_runs("A-79")
    chosen = claim_of(first, "shipped")
    rejected_meanwhile(monkeypatch, second.conflict_id)
    refused = Client(HTTP_AUTHORIZATION=f"Bearer {token}").post(
        f"/api/review/conflicts/{first.conflict_id}/resolve",
        {"choice": chosen, "reason": "the carrier scanned it"},
        content_type="application/json",
    )
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert f"claim {chosen} ('shipped' by order-agent in run {first.run_id}) was" in detail
    assert "choose another claim or reject both (choice 'none')" in detail
    assert DjangoJournal().version(f"conflict-{first.conflict_id}") == 1


def test_a_ruling_that_names_no_run_is_shown_without_a_link(as_reviewer):
    # A ClaimsReconciled with no run id (Claims.settle's default; an imported journal may hold
    # one): the card linked to the run "" and the whole conflicts page was a 500.
    first, second = two_runs("A-78")
    claim = claim_of(first, "shipped")
    Claims(DjangoJournal()).settle(second.subject, second.predicate, claim, [], "by hand", "x")
    now = card_of(as_reviewer, second.conflict_id, "A-78")
    words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", now))
    assert "settled since this conflict was parked, by a ruling of no run, which chose it" in words
    assert claim not in offered(now)


def test_rejecting_claims_other_rulings_all_settled_closes_the_conflict_and_settles_nothing(
    token,
):
    """The second run's conflict holds the first run's two claims too; rejecting all four
    there leaves the first conflict nothing to settle. Rejecting both there closes it, with
    no decision on the claims, where one naming no claim at all was written."""
    first, second = two_runs("A-77")
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token}")

    def decisions() -> list[ClaimsReconciled]:
        return [
            r.event
            for r in DjangoJournal().read("claims-order:A-77")
            if isinstance(r.event, ClaimsReconciled)
        ]

    for conflict in (second, first):
        reply = api.post(
            f"/api/review/conflicts/{conflict.conflict_id}/resolve",
            {"choice": "none", "reason": "the customer will be called"},
            content_type="application/json",
        )
        assert reply.status_code == 200, reply.content
    [rejected] = [d for d in decisions() if d.run_id == second.run_id and d.winner == "none"]
    assert len(rejected.losers) == 4
    assert [d for d in decisions() if d.run_id == first.run_id and d.winner == "none"] == []
    [item] = api.get("/api/review/conflicts", {"run": first.run_id, "status": "all"}).json()[
        "items"
    ]
    assert item["status"] == "resolved" and item["choices"] == []
