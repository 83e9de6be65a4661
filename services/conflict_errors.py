"""What a decision on a parked conflict is refused with (services/review.py): a choice the
conflict does not offer, a decision taken first, a fact or a claim that moved, the mutation
gate's refusal, a target nobody registered; each message names what was wrong, and rejecting
every claim in the words of whoever asked (the API's choice, the page's button)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runtime.events import ClaimsReconciled, ConflictResolved, MutationRefused, shown
from runtime.journal import WrongExpectedVersion
from services.commit_targets import TARGETS

NONE = "none"  # the choice that rejects every claim


@dataclass(frozen=True)
class Words:
    """How a refusal names rejecting every claim: the API's choice is 'none', the page's
    button reads "reject both" (a page that told of choice 'none' offered no such thing)."""

    rejecting: str  # "... still closes it"
    reject: str  # "choose another claim or ..."


API = Words(f"rejecting both claims (choice {NONE!r})", f"reject both (choice {NONE!r})")


class ConflictError(Exception):
    """A decision on a conflict is refused as asked (a choice it does not offer, a value the
    target cannot hold); the message says why."""

    def said(self, words: Words = API) -> str:
        """The message, naming rejecting every claim in `words` (str(): the API's)."""
        return str(self)


class ConflictNotFound(ConflictError):
    def __init__(self, conflict_id: str) -> None:
        super().__init__(f"no parked conflict {conflict_id}")


class ConflictAlreadyDecided(ConflictError):
    """Somebody decided the conflict first (or the same person, for another reason); when their
    decision was read, the message says who, what and why (the card of the one who came second
    still shows it open, with its form)."""

    def __init__(self, conflict_id: str, decided: ConflictResolved | None = None) -> None:
        super().__init__(f"conflict {conflict_id} has already been decided{decided_as(decided)}")


def decided_as(decided: ConflictResolved | None) -> str:
    """ " by ann, who chose 'cancelled' (claim k1) for the reason 'she asked first'", or ""."""
    if decided is None:
        return ""
    if decided.choice == NONE:
        chose = "rejected both claims"
    else:
        chose = f"chose {shown(decided.value)} (claim {decided.choice})"
    return f" by {decided.by}, who {chose} for the reason {shown(decided.reason)}"


class ConflictMoved(ConflictError):
    """The fact changed after the conflict was parked: the choice would overwrite that."""


class ClaimSettled(ConflictError):
    """The claim chosen was settled since the conflict was parked, by a ruling on another
    conflict that held it too (the subject's claims are shared by the runs on it)."""

    def __init__(self, conflict_id: str, claim: dict[str, Any], by: ClaimsReconciled) -> None:
        self.conflict_id, self.claim, self.by = conflict_id, claim, by
        super().__init__(self.said())

    def said(self, words: Words = API) -> str:
        c = self.claim
        return (
            f"claim {c.get('claim_id')} ({shown(c.get('value'))} by {c.get('agent') or '?'} "
            f"in run {c.get('run_id') or '?'}) was settled since this conflict was parked, by "
            f"a ruling in run {self.by.run_id} ({self.by.rule}); choose another claim or "
            f"{words.reject}"
        )


class ClaimsMoved(ConflictError):
    """The subject's claims stream moved between the check of which claims were settled and
    the decision's append: nothing was written. The ruling checks again (`resolve`); this
    reaches the person only when the stream kept moving for every check."""

    def __init__(self, conflict_id: str, moved: WrongExpectedVersion) -> None:
        super().__init__(
            f"the claims of conflict {conflict_id} kept changing while the ruling was written "
            f"({moved}); nothing was decided: look at the conflict again"
        )


class RulingRefused(ConflictError):
    """The mutation gate refused the ruling; `refused` names the check, what the ruling held
    and what the record says. Nothing was decided or committed."""

    def __init__(self, refused: MutationRefused) -> None:
        self.refused = refused
        super().__init__(self.said())

    def then(self, words: Words) -> str:
        """What the person may still do, said after the refusal."""
        return ""

    def said(self, words: Words = API) -> str:
        refused = self.refused
        return f"refused at the mutation gate ({refused.check}): {refused.reason}{self.then(words)}"


class StaleRuling(RulingRefused, ConflictMoved):
    """Refused because the world moved on since the conflict was parked: the fact changed, or
    the intent it was parked under was superseded. Rejecting both claims is still open (it
    commits nothing), and the message says so: without it the conflict stays open for ever."""

    def then(self, words: Words) -> str:
        return f"; {words.rejecting} still closes it"


class RulingNotAllowed(RulingRefused):
    """Refused because the person's role may not rule on conflicts."""


class RulingRepeated(RulingRefused):
    """Refused because the ruling's id was used for the decision already taken, with another
    choice or reason: the message says what that decision was."""

    def __init__(self, refused: MutationRefused, decided: ConflictResolved) -> None:
        self.decided = decided
        super().__init__(refused)

    def then(self, words: Words) -> str:
        return f"; conflict {self.decided.conflict_id} was decided{decided_as(self.decided)}"


class UnknownCommitTarget(ConflictError):
    """The conflict commits to a kind of target no installed app registered: it cannot be
    decided here (the app that parked it is missing, or never registered its target)."""

    def __init__(self, conflict_id: str, kind: str) -> None:
        known = ", ".join(sorted(TARGETS)) or "none"
        super().__init__(
            f"conflict {conflict_id} commits to {kind!r}, and no installed app registered a "
            f"commit target of that kind (registered: {known}); nothing was decided"
        )
        self.kind = kind


def refusal(refused: MutationRefused) -> RulingRefused:
    """The typed error for a refused ruling: stale (409), not allowed (403), or refused."""
    if refused.check in ("intent", "evidence"):
        return StaleRuling(refused)
    if refused.check == "authority":
        return RulingNotAllowed(refused)
    return RulingRefused(refused)
