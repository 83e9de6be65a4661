"""Tags on runs: people's notes for finding runs again (journalled as RunTagged)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, RunTag
from runtime import streams
from runtime.events import RunTagged
from runtime.journal import WrongExpectedVersion
from services.runs import RunError, RunNotFound

TAG = re.compile(r"[a-z0-9][a-z0-9._-]{0,31}")
PER_RUN = 20
ATTEMPTS = 5  # reads of the tags before giving up, when each changed before its write


class BadTag(RunError):
    """A tag that is not one, or too many (the API answers a 422 at the field; the message
    names the field and the tag).

    The message speaks the API's language (its field names); a page says it in a sentence of
    its own from `field`, `tags` (as they were sent) and `why`."""

    def __init__(self, field: str, tags: list[str], why: str, message: str) -> None:
        super().__init__(message)
        self.field, self.tags, self.why = field, tags, why


class TagsMoved(RunError):
    """The run's control stream moved between every read of its tags and the write (a 409):
    nothing was changed."""


# Capitals are accepted and lowered: the rule says so, where it once said "lowercase letters"
# of a field that takes "Nightly".
RULE = (
    "up to 32 letters, digits, '.', '_' and '-', starting with a letter or digit; "
    "capitals are lowered"
)


def checked(tags: list[str], field: str) -> list[str]:
    found = []
    for sent in tags:
        tag = sent.strip().lower()
        if not TAG.fullmatch(tag):
            # Quoted as sent, not lowered: the page and the runs list's filter quote it so.
            shown = sent.strip()[:40]
            raise BadTag(
                field, [shown], f"a tag is {RULE}", f"{field}: {shown!r} is not a tag ({RULE})"
            )
        if tag not in found:
            found.append(tag)
    return found


@dataclass(frozen=True)
class Tagged:
    """A run's tags after a change, and what of the change was so already, each said in a
    few words ("already tagged nightly", "not tagged x"): nothing is journalled for those,
    and a person who typed "Nightly" on a run tagged nightly is told why nothing changed."""

    tags: list[str]
    unchanged: list[str]


def tag(run_id: str, add: list[str], remove: list[str], by: str) -> Tagged:
    """Put tags on a run and take others off; its tags after, and what was so already."""
    if not RunSummary.objects.filter(run_id=run_id).exists():
        raise RunNotFound(run_id)
    added, removed = checked(add, "add"), checked(remove, "remove")
    if set(added) & set(removed):
        both = sorted(set(added) & set(removed))[0]
        why = "it was both to be added and to be removed"
        raise BadTag("add and remove", [both], why, f"add and remove: {both!r} is in both")
    journal, stream = DjangoJournal(), streams.control(run_id)
    for _ in range(ATTEMPTS):
        # The stream's version first, then the tags as of it (the read model caught up past
        # it), and the change appended at that version: another change that landed meanwhile
        # (another person's 15 tags beside these 15) makes it read and check again, where
        # appending at whatever version came next let a run hold 30 tags.
        version = journal.version(stream)
        projection.catch_up(["tags"])
        now = set(of(run_id))
        after = (now | set(added)) - set(removed)
        if len(after) > PER_RUN:
            why = f"a run has at most {PER_RUN} tags (this would have {len(after)})"
            raise BadTag("add", [t for t in added if t not in now], why, f"add: {why}")
        unchanged = [f"already tagged {t}" for t in added if t in now]
        unchanged += [f"not tagged {t}" for t in removed if t not in now]
        new = [t for t in added if t not in now]
        gone = [t for t in removed if t in now]
        if not (new or gone):
            return Tagged(sorted(now), unchanged)
        event = RunTagged(run_id=run_id, by=by, added=new, removed=gone)
        try:
            journal.append(stream, [event], version)
        except WrongExpectedVersion:
            continue
        projection.catch_up(["tags"])
        return Tagged(of(run_id), unchanged)
    raise TagsMoved(f"run {run_id}'s tags changed at every one of {ATTEMPTS} tries; try again")


def of(run_id: str) -> list[str]:
    return sorted(RunTag.objects.filter(run_id=run_id).values_list("tag", flat=True))
