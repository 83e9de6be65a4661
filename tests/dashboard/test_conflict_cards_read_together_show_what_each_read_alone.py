"""The conflicts' cards read for a page at once (services/review.cards_of) show what each card
read alone showed: the claims each with the ruling that settled it since (or none), the choices
left, and what the fact or order holds now (value, version, who set it; nothing when nothing
holds it), on a store of varied conflicts: facts far back and never set, orders there and
gone, two conflicts on one subject, many decisions since a conflict was parked, values
holding markup, decided conflicts among them.

Compared with the cards as the whole streams have them (every fact, every decision of the
subject), and with the queue's pages and API read one card at a time, each read on its own as
before 2026-12-07 (bench/conflict_store.one_at_a_time)."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from bench import conflict_store
from desk.models import Order
from journal_store.journal import DjangoJournal
from journal_store.models import Conflict
from runtime.coordination.claims import Claims
from runtime.coordination.facts import Facts
from runtime.events import FactChanged
from services import review

pytestmark = pytest.mark.django_db


@pytest.fixture
def varied() -> list[Conflict]:
    """40 conflicts (bench/conflict_store.py's, up to 100 facts and 12 decisions a subject),
    a few decided, and two read far back: the fact of cf-V-00008, whose status last changed
    150 facts ago (three windows of 64), and cf-V-00099, parked before 20 decisions on another
    predicate and one that settles its first claim (pages of 8, 16 and 32)."""
    journal = DjangoJournal()
    rng = random.Random(7)
    conflict_store.build(40, rng, facts=100, decisions=12, tag="V")
    far = "order:V-8"  # cf-V-00008's own
    Facts(journal).write(far, "status", "held", journal.version(Facts.stream(far)), "early")
    for n in range(150):
        Facts(journal).write(far, "note", n, journal.version(Facts.stream(far)), "noter")
    conflict_store.park(journal, 99, rng, facts=0, decisions=0, tag="V")
    deep = Conflict.objects.get(conflict_id="cf-V-00099")
    claims = Claims(journal)
    for n in range(20):
        claims.settle(deep.subject, "amount_cents", f"cl-a{n}", [f"cl-b{n}"], "rule", n, "r-z")
    first = deep.claims[0]["claim_id"]
    claims.settle(deep.subject, "status", first, ["cl-c"], "reviewer ann: it shipped", "x", "r-y")
    decided = ["cf-V-00002", "cf-V-00013", "cf-V-00030"]
    Conflict.objects.filter(conflict_id__in=decided).update(
        status="resolved", decided_by="ann", resolution={"choice": "none", "value": None}
    )
    return list(Conflict.objects.order_by("-position"))


def current_wholly(conflict: Conflict) -> review.Current | None:
    """What the fact or order holds now, from the order's row or the fact's whole stream."""
    commit = conflict.commit or {}
    if commit.get("service") == "orders":
        order = Order.objects.filter(order_id=commit["key"]).first()
        return order and review.Current(order.status, order.version, order.updated_by)
    records = DjangoJournal().read(Facts.stream(str(commit.get("key") or conflict.subject)))
    if not records:
        return None
    found = review.Current(None, records[-1].version, "", False)
    for rec in records:
        if isinstance(rec.event, FactChanged) and rec.event.predicate == conflict.predicate:
            found = review.Current(rec.event.value, found.version, rec.event.by, True)
    return found


def card_wholly(conflict: Conflict) -> review.Card:
    is_open = conflict.status == "open"
    gone = conflict_store.settled_wholly(conflict) if is_open else {}
    claims, choices = [], []
    for key, claim in zip(review.claim_choices_of(conflict.claims), conflict.claims, strict=True):
        by = gone.get(key)
        ruled = by and {"run_id": by.run_id, "rule": by.rule, "won": by.winner == key}
        if is_open and by is None:
            choices.append(key)
        claims.append({**claim, "run_id": claim.get("run_id") or conflict.run_id, "settled": ruled})
    return review.Card(claims, [*choices, "none"] if is_open else [], current_wholly(conflict))


def test_the_cards_read_together_are_the_cards_of_the_whole_streams(varied):
    cards = review.cards_of(varied)
    assert cards == [card_wholly(c) for c in varied]
    # The store holds every case: a claim settled since, a fact not set, an order gone, ...
    currents = [card.current for card in cards]
    assert any(c["settled"] for card in cards for c in card.claims)
    assert None in currents and any(c and not c.known for c in currents)
    by_id = {c.conflict_id: card for c, card in zip(varied, cards, strict=True)}
    far = DjangoJournal().version(Facts.stream("order:V-8"))
    assert by_id["cf-V-00008"].current == review.Current("held", far, "early", True)
    ruling = {"run_id": "r-y", "rule": "reviewer ann: it shipped", "won": True}
    assert by_id["cf-V-00099"].claims[0]["settled"] == ruling


def unvarying(text: str) -> str:
    """A page without what differs from one drawing to the next: its forms' ruling ids and
    CSRF tokens, the minutes items have waited."""
    text = re.sub(r"rl-[0-9a-f]{24}", "rl-", text)
    text = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", text)
    text = re.sub(r'"X-CSRFToken": "[^"]*"', "", text)
    return re.sub(r"waiting [^<·]*", "waiting", text)


def test_the_queues_pages_and_api_show_what_they_showed_read_a_card_at_a_time(
    varied, as_reviewer, api
):
    reads: dict[str, Any] = {
        f"/review/conflicts?status={status}{place}": as_reviewer
        for status in ("open", "all")
        for place in ("", f"&before={varied[24].position}")
    }
    reads |= {f"/api/review/conflicts?status={s}&limit=100": api for s in ("open", "all")}

    def shown() -> dict[str, str]:
        answers = {url: client.get(url) for url, client in reads.items()}
        assert all(a.status_code == 200 for a in answers.values())
        return {url: unvarying(a.content.decode()) for url, a in answers.items()}

    together = shown()
    with conflict_store.one_at_a_time():
        alone = shown()
    assert together == alone
    page = together["/review/conflicts?status=all"]
    assert page.count('<section class="card"') == 25
    # A value holding markup is shown as written, never drawn (as_json, then escaped).
    assert "&quot;&lt;b&gt;held&lt;/b&gt; &amp; &#x27;quoted&#x27;&quot;" in page
    assert "<b>held</b>" not in page
