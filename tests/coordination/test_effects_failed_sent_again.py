"""An effect recorded as failed whose call never got the provider's answer (the provider was
down), where the provider deduplicates on the key: with `perform(..., resend=True, again=...)`
it is taken over after its EffectFailed (an EffectResumed, fenced) and sent again under the
same key, its new outcome recorded after. Not sent again, as before: a failure `again` does not
accept (the provider's own refusal), an effect whose provider does not deduplicate, one that
holds part of a total, and a caller with no fence. A sending again that dies is unsettled once
more: the reconciler sees it, and a later taker sends it again once its lease has lapsed."""

from __future__ import annotations

import pytest

from journal_store.journal import DjangoJournal
from runtime.coordination.effects import EffectPreviouslyFailed, Ledger
from runtime.coordination.leases import Leases
from runtime.coordination.reconciler import unsettled
from runtime.events import ErrorInfo
from runtime.fenced import Fenced
from tests.coordination.dying import Died, dies

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "fx-undo"
PAYLOAD = {"credit_id": "CR-1"}


class Down(Exception):
    """The provider could not be reached."""


class Refused(Exception):
    """The provider answered: no."""


class Provider:
    """Deduplicates on the key: one reversal per key, the first answer to every call."""

    def __init__(self) -> None:
        self.book: dict[str, dict] = {}
        self.calls = 0
        self.fails: type[Exception] | None = None

    def __call__(self, key: str) -> dict:
        self.calls += 1
        if self.fails is not None:
            raise self.fails("no answer")
        return self.book.setdefault(key, {"reversed": "CR-1"})


def unreached(error: ErrorInfo) -> bool:
    return error.type != "Refused"


def ledger_of(journal, worker: str, ttl: float = 60) -> Ledger:
    lease = Leases(journal).acquire("r-1", worker, ttl=ttl)
    return Ledger(Fenced(journal, *lease.fence))


def failed_once(provider: Provider, why: type[Exception] = Down) -> DjangoJournal:
    journal = DjangoJournal()
    provider.fails = why
    with pytest.raises(why):
        perform(ledger_of(journal, "worker-1", ttl=0), provider)
    provider.fails = None
    return journal


def perform(ledger: Ledger, provider: Provider, **kw):
    kw = {"resend": True, "again": unreached, **kw}
    return ledger.perform(KEY, "saga-compensation", "saga-s/credit", PAYLOAD, provider, **kw)


def kinds(journal) -> list[str]:
    return [r.event.kind for r in journal.read(Ledger.stream(KEY))]


def test_a_failure_that_never_reached_the_provider_is_sent_again_under_its_key():
    provider = Provider()
    journal = failed_once(provider)
    ledger = ledger_of(journal, "worker-2")
    assert perform(ledger, provider) == {"reversed": "CR-1"}
    assert kinds(journal) == ["EffectStarted", "EffectFailed", "EffectResumed", "EffectSucceeded"]
    assert list(provider.book) == [KEY] and provider.calls == 2
    # Settled now: asked again, the recorded answer, nothing sent.
    assert perform(ledger, provider) == {"reversed": "CR-1"}
    assert provider.calls == 2


@pytest.mark.parametrize(
    "why, kw, fenced",
    [
        (Refused, {}, True),  # the provider's answer to the key
        (Down, {"resend": False}, True),  # the provider does not deduplicate
        (Down, {"again": None}, True),  # the caller did not say which failures to send again
        (Down, {"reserve": lambda: pytest.fail("not held again")}, True),  # its hold was given back
        (Down, {}, False),  # no fence: nothing would stop a second sender
    ],
)
def test_a_failure_not_of_that_sort_is_answered_as_recorded(why, kw, fenced):
    provider = Provider()
    journal = failed_once(provider, why)
    ledger = ledger_of(journal, "worker-2") if fenced else Ledger(journal)
    with pytest.raises(EffectPreviouslyFailed, match="no answer"):
        perform(ledger, provider, **kw)
    assert kinds(journal) == ["EffectStarted", "EffectFailed"] and provider.calls == 1


def test_a_sending_again_that_dies_is_unsettled_and_sent_again_by_the_next_taker():
    provider = Provider()
    journal = failed_once(provider)

    with pytest.raises(Died):
        perform(ledger_of(journal, "worker-2", ttl=0), dies(provider))
    [pending] = unsettled(Ledger(journal), older_than=-1)
    assert pending.started.key == KEY and pending.holder.kind == "EffectResumed"
    assert perform(ledger_of(journal, "worker-3"), provider) == {"reversed": "CR-1"}
    assert kinds(journal)[-3:] == ["EffectResumed", "EffectResumed", "EffectSucceeded"]
    assert list(provider.book) == [KEY]
