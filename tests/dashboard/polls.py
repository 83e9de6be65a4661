"""What the tests of the pages' polls for what arrived share: the address a page polls, read as
the browser reads it, and a conflict parked as the support desk parks one."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

from journal_store.journal import DjangoJournal
from runtime.events import ConflictParked


def poll_of(page: str, element_id: str) -> str:
    """The address the element `element_id` of the page asks (its hx-get, unescaped)."""
    found = re.search(rf'id="{element_id}"[^>]*hx-get="([^"]+)"', page)
    assert found, f"the page has no #{element_id} that polls"
    return unescape(found.group(1))


def park(
    run_id: str, conflict_id: str, claims: list[dict[str, Any]] | None = None, **at: float
) -> None:
    """A conflict on an order's status (`order:CONFLICT_ID`), two agents' claims or `claims`,
    parked in its own stream as runtime/coordination/claims.py parks one (not caught up);
    recorded at `t` if given, now otherwise."""
    claims = claims or [{"agent": "a", "value": "shipped"}, {"agent": "b", "value": "cancelled"}]
    event = ConflictParked(
        run_id=run_id,
        conflict_id=conflict_id,
        subject=f"order:{conflict_id}",
        predicate="status",
        conflict_type="value",
        claims=claims,
        **at,
    )
    DjangoJournal().append(f"conflict-{conflict_id}", [event], 0)  # where claims.py parks one


def quiet(answer) -> bool:
    """The poll's answer while nothing new arrived: 204, nothing to swap."""
    return answer.status_code == 204 and answer.content == b""


def said(answer) -> str:
    """The poll's answer when the count moved: the sentence and the poll that goes on, with
    the status that stops the poll that asked (286)."""
    assert answer.status_code == 286, answer.status_code
    return answer.content.decode()


def link_of(answer: str) -> str:
    """Where the sentence of a poll's answer links to."""
    found = re.search(r'<a href="([^"]+)"', answer)
    assert found, "the answer has no link"
    return unescape(found.group(1))
