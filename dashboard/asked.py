"""A page's query value it cannot take: a date that is none, a sort or status it does not
know, a position that is no number. The API answers such a value 422 naming the field
(dashboard/api/errors.py `invalid`); a page answers 400 and stays usable: its form drawn again
with what was typed, a message naming each field, the value and what the field takes
(templates/dashboard/_bad_query.html), and no list drawn as if the filter had applied.

What reads a page's filter raises BadQuery with every field it cannot take; the page's view
draws itself with `problems` (and the API answers `invalid("query", exc.problems)`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any

from journal_store import queues, search
from runtime import streams
from runtime.events import BY_KIND
from services import metrics
from services.asked import BadQuery, shown

__all__ = [
    "KEPT",
    "NOT_A_POSITION",
    "POSITION_MAX",
    "BadQuery",
    "flag_of",
    "kinds_of",
    "moment_of",
    "no_event_at",
    "not_a_position",
    "page_of",
    "parse_date",
    "position",
    "position_of",
    "queue_filter",
    "queue_kept",
    "queue_statuses",
    "shown",
    "typed",
]

KEPT = 64  # characters of a refused value kept in the form (an id's, a team's column)
# The furthest position anybody may ask to read after: past any journal's end, and inside the
# 64-bit column it is compared with (a larger one would be an error in the database driver).
POSITION_MAX = 2**62


def typed(params: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, str]:
    """What was typed in these fields, as a form drawn again shows it (a huge value cut)."""
    return {name: str(params.get(name) or "")[:KEPT] for name in names}


def position(text: str | None) -> int | None:
    """A position a page's link carries (`after`, `call`, a fork's `at`): a whole number in
    ASCII digits from 0 to POSITION_MAX; None when absent or not one (`not_a_position` says
    why). A negative number is none: it was taken for the start, 0, as if it had not been
    asked; nor is one past POSITION_MAX, which was read as POSITION_MAX, a number nobody
    had asked for."""
    if not (text and text.isascii() and text.isdigit()):
        return None  # (str.isdigit takes superscripts and other digits int() refuses)
    # More digits than POSITION_MAX has is past it, never read (int() refuses 4,300 digits,
    # leading zeros too).
    digits = text.lstrip("0") or "0"
    if len(digits) > len(str(POSITION_MAX)) or int(digits) > POSITION_MAX:
        return None
    return int(digits)


def not_a_position(text: str) -> str:
    """Why `text`, which `position` took no position from, is refused where a position is
    asked for, as pages and API say it."""
    if text.isascii() and text.isdigit():
        return f"{shown(text)} is not a position: past the last there can be ({POSITION_MAX:,})"
    return f"{shown(text)} {NOT_A_POSITION}"


NOT_A_POSITION = "is not a position (a whole number, 0 or more)"


def no_event_at(run_id: str, at: str) -> str:
    """Why a fork's `at` is refused when it is a position but no event of the run is there:
    the fork page's words and the fork API's."""
    return f"no event of run {run_id} is at position {at}"


def position_of(params: Mapping[str, Any], name: str) -> int | None:
    """The position a page's `name` carries (see `position`), None when not asked; BadQuery
    naming it when it is not a whole number from 0, where the page began at the start as if
    it had not been asked."""
    text = str(params.get(name) or "")
    found = position(text)
    if text and found is None:
        raise BadQuery({name: not_a_position(text)})
    return found


def flag_of(params: Mapping[str, Any], name: str) -> bool:
    """Whether a page's link asks for `name` (`latest=1`, `live=1`, `infra=1`); BadQuery for
    any value but 1 or blank, where `latest=yes` was read as not asked."""
    text = str(params.get(name) or "")
    if text not in ("", "1"):
        raise BadQuery({name: f"{shown(text)} is not a flag: 1, or left out"})
    return text == "1"


def page_of(params: Mapping[str, Any]) -> int:
    """The page of a list a page's `page` asks for, 1 when not asked (one past the last is the
    last, as Django's paginator has it); BadQuery when it is not a whole number from 1, where
    the paginator showed the first page as if it had not been asked."""
    text = str(params.get("page") or "")
    if not text:
        return 1
    digits = text.lstrip("0")
    if not (text.isascii() and text.isdigit() and digits):
        raise BadQuery({"page": f"{shown(text)} is not a page (a whole number, 1 or more)"})
    # However many digits (int() refuses 4,300): past the last page, which is shown.
    return int(digits) if len(digits) <= 18 else 10**18


def parse_date(value: str | None) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        return None


MOMENT_CHARS = 40  # an ISO 8601 time with microseconds and an offset has 32


def moment_of(params: Mapping[str, Any], name: str) -> datetime | None:
    """A time a page's own link carries (the runs list's `newer_than`): ISO 8601 with its
    offset, as the page wrote it, given back in UTC; None when absent. BadQuery naming the
    field otherwise: a time without an offset cannot be compared with the stored ones, which
    are UTC, nor can one that UTC puts outside the years 1 to 9999 (0001-01-01T00:00+14:00 is
    in year 0 there: the database's conversion raised OverflowError, a 500)."""
    text = str(params.get(name) or "")
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text) if len(text) <= MOMENT_CHARS else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        why = "is not a time with its offset (ISO 8601, as 2026-12-04T16:37:55+00:00)"
        raise BadQuery({name: f"{shown(text)} {why}"})
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        why = "is a time outside the years 1 to 9999 once its offset is taken away (in UTC)"
        raise BadQuery({name: f"{shown(text)} {why}"}) from None


def kinds_of(asked: Sequence[str]) -> tuple[str, ...]:
    """The kinds of event a filter asks for, once each, blanks left out; BadQuery naming the
    first that no event has (it listed no events, as if none of that kind had happened)."""
    kinds = tuple(dict.fromkeys(k for k in asked if k))
    if unknown := [k for k in kinds if k not in BY_KIND]:
        raise BadQuery({"kind": f"{shown(unknown[0])} is no kind of event"})
    return kinds


def queue_statuses(queue: queues.Queue) -> tuple[str, ...]:
    """What a queue's list may show: the open items, those of one outcome, the decided ones
    (whatever the outcome) or all."""
    return (queues.OPEN, *queue.outcomes, "decided", "all")


WORDS_MAX = 200  # characters of a queue's search, and of the runs list's


def words_refused(words: str) -> str | None:
    """Why a search's words (a queue's, the runs list's Search) cannot be taken, or None: too
    long (a phrase of as many trigrams: journal_store/substrings.py), or holding what the search
    page refuses (a control, a bidi control or another unseen format character, named)."""
    if len(words) > WORDS_MAX:
        return f"{shown(words)} is longer than {WORDS_MAX} characters"
    if why := search.unsearchable(words):
        return f"the search {why}"
    return None


def queue_filter(
    queue: queues.Queue, params: Mapping[str, Any], labels: Mapping[str, str] | None = None
) -> tuple[str, str, metrics.MetricsFilter, str]:
    """The status, the run and the runs a queue's page or the API asks for (open, every
    run's, when not asked); BadQuery names what it cannot take, where the page showed an
    unknown status's items as the open ones, and a run's id cut at 64 characters (or one that
    is none) as an empty queue. The runs are chosen as the metrics page chooses them (a team,
    a scenario, a model, the days they started in), so that its count of undecided items
    links to those very items. Last, the words (`q`) its items are searched for: a
    reviewer deciding several at once takes those of one cause. A reason that names another
    field names it as `labels` does (the page's, queue_pages.LABELS; the API's are its
    parameters)."""
    wrong: dict[str, str] = {}
    status = str(params.get("status") or queues.OPEN)
    if status not in (known := queue_statuses(queue)):
        title = queue.name.replace("_", " ")
        wrong["status"] = f"{shown(status)} is no status of the {title}; one of {', '.join(known)}"
    run = str(params.get("run") or "").strip()
    if run and not streams.is_run_id(run):
        wrong["run"] = f"{shown(run)} is not a run id ({streams.RUN_ID_RULE})"
    words = str(params.get("q") or "").strip()
    if why := words_refused(words):
        wrong["q"] = why
    runs = metrics.MetricsFilter()
    try:
        runs = metrics.MetricsFilter.parse(params, labels=labels)
    except BadQuery as exc:
        wrong |= exc.problems
    if wrong:
        raise BadQuery(wrong)
    return status, run, runs, words


def queue_kept(run: str, words: str, runs: metrics.MetricsFilter) -> dict[str, str]:
    """What a queue's links and its poll keep besides the status: the run, the words and the
    runs asked for."""
    return ({"run": run} if run else {}) | ({"q": words} if words else {}) | runs.params()
