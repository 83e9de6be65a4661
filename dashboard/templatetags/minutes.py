from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any

from django import template
from django.conf import settings
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.timesince import timesince
from django.utils.timezone import now

from dashboard import actions, present
from journal_store import search
from runtime import status
from runtime.coordination.conflicts import POLICIES, nobody
from runtime.views import FINISHING
from services.commit_targets import target_named

register = template.Library()


@register.simple_tag
def currency() -> str:
    """The currency of the price table (MINUTES_PRICES), which every cost is in: the runs
    list's Cost said "0.0000" with no unit, where the Bill tab says "USD"."""
    return settings.PRICES.currency


@register.simple_tag
def reason_max() -> int:
    """The most characters of a stated reason that are kept: a reason box's maxlength, so a
    longer one is stopped as it is typed rather than cut without a word when it is recorded."""
    return actions.REASON_MAX


@register.simple_tag
def run_duration(run: Any) -> str:
    return present.duration(run.started_at, run.finished_at, run.waited)


@register.filter
def status_label(value: str) -> str:
    """A status as a person reads it ("waiting for a person", not "waiting")."""
    return status.label(value)


@register.filter
def polled_every(value: str) -> int:
    """How many seconds apart a page looks again at a run in this status: 2 while it runs, 5
    while it waits for a person (status.AWAITING); 0 when it is over (no looking again)."""
    if status.is_active(value):
        return 2
    return 5 if status.is_awaiting(value) else 0


@register.filter
def stage_label(run: Any) -> str:
    """A run's stage as a person reads it: at "waiting", what a person is asked to decide; at
    "finishing", why it finishes."""
    if run.stage == FINISHING:
        return "finishing without the work a person discarded"
    if run.stage != status.WAITING:
        return str(run.stage)
    return f"waiting for a person: {run.waiting_for or 'a decision'}"


@register.filter
def waits_since(run: Any) -> datetime | None:
    """When the oldest conflict or dead letter a run at stage "waiting" waits on was opened
    (the summary's `waiting_since`); None at any other stage."""
    return getattr(run, "waiting_since", None) if run.stage == status.WAITING else None


@register.filter
def marked(snippet: str) -> str:
    """A search hit's snippet, escaped, its matched words in <mark>: each START opens one and
    the STOP after it closes it. The text's own are dropped by the search (search.own_marks);
    a marker out of turn here would be dropped as well."""
    out, open_ = [], False
    for piece in re.split(f"([{search.START}{search.STOP}])", snippet):
        if piece == search.START and not open_:
            out.append("<mark>")
            open_ = True
        elif piece == search.STOP and open_:
            out.append("</mark>")
            open_ = False
        elif piece not in (search.START, search.STOP):
            out.append(str(escape(piece)))
    return mark_safe("".join(out) + ("</mark>" if open_ else ""))  # every piece escaped above


@register.filter
def thousands(value: Any) -> Any:
    """A whole number as the pages write a count of tokens: in groups of three (20,505 of
    100,000), as the charts' axes do. Anything else (None, a dash already chosen) as it is."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return value


@register.filter
def tokens(value: Any) -> Any:
    """A number of tokens that may be an average (per verified success): whole, in groups of
    three, as `thousands` writes a count. The metrics page wrote one figure three ways: "1347
    tokens", "1,347" and "1346.7". Anything else (None, a dash) as it is."""
    if isinstance(value, float) and math.isfinite(value):
        value = round(value)
    return thousands(value)


@register.filter
def get_item(mapping: Any, key: str) -> Any:
    return mapping.get(key) if hasattr(mapping, "get") else None


# What an id's characters may be as they are: a run id's, a tag's (runtime/streams.py RUN_ID).
ID_PART = re.compile(r"[^A-Za-z0-9._-]")


@register.filter
def id_part(value: Any) -> str:
    """`value` (a run's id, a tag, a letter's) as part of an element's id: the characters an id
    of a run holds kept, any other (a space, which no id may hold; a letter id's ':') as
    ~<hex>~, so that two values never share an id. A control in a polled part needs an id
    of its own for htmx to give it the focus back after the poll (views/runs.py)."""
    return ID_PART.sub(lambda found: f"~{ord(found.group()):x}~", str(value))


@register.filter
def as_json(value: Any) -> str:
    """Pretty JSON text (the template escapes it)."""
    return present.pretty(value)


@register.filter
def make_list_words(text: str) -> list[str]:
    return text.split()


@register.filter
def gist(payload: Any) -> str:
    """A message's point in a line: its reasons, summary, verdict or brief."""
    if not isinstance(payload, dict):
        return ""
    for key in ("reasons", "summary", "verdict", "brief", "task", "bid"):
        if payload.get(key) not in (None, ""):
            return present.clip(payload[key], 110)
    return ""


@register.filter
def commit_target(commit: dict[str, Any]) -> str:
    """The key a ruling on a conflict writes, as its kind names one: "order o-1a2b", where the
    card said "orders o-1a2b" and the kind read as a typo."""
    return target_named(commit)


@register.filter
def conflict_why(kind: str) -> str:
    """Why a conflict of this type waits for a person, in a reviewer's words, naming the rule
    that settles its type (runtime/coordination/conflicts.py) where there is one. The card
    read "A state conflict: fetch the authoritative state; then the authority ranking; no
    rule decided this one."""
    policy = POLICIES.get(kind)  # type: ignore[call-overload]
    if policy is None:
        return f"A {kind} conflict: no rule settles this kind, so a person does."
    if policy.decide is nobody:
        return f"A {kind} conflict: {policy.rule}. No rule settles it."
    return (
        f"A {kind} conflict. The rule for its kind ({policy.rule}) could not choose between "
        "these claims (what it reads was missing from them, or tied), so it waits for a person."
    )


@register.filter
def words(name: str) -> str:
    """A code name as words: "stalled_run" reads "stalled run"."""
    return str(name).replace("_", " ")


@register.filter
def cite(position: int | None, numbers: dict[int, str] | None) -> str:
    """An event a page cites, by its number in the timeline ("#57", "#lease 3"), from the
    page's `numbers` (queries.numbers); one the lookup did not find, by its store position."""
    number = (numbers or {}).get(position) if position else None
    return f"#{number}" if number is not None else f"position {position}"


@register.filter
def waited(since: datetime | None, until: datetime | None = None) -> str:
    """How long from `since` to `until` (now when None) in words, as a review item's wait:
    "3 days", "5 hours, 2 minutes", and "less than a minute" where `timesince` would say
    "0 minutes", which reads as if nobody had waited."""
    if since is None:
        return ""
    end = until or now()
    if (end - since).total_seconds() < 60:
        return "less than a minute"
    return timesince(since, end)
