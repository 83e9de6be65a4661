"""The reflection step (seed 01, exercise 8): a critic reads the coder's draft before review.

With `reflect` on, every draft goes to the critic first, on the thread `<task>:reflect`, with
what the reviewer would get (the diff and the test evidence, not the coder's rationale). A
`pass` sends the draft to review as it is. A `revise` sends the critique back to the coder, who
revises once, on the same thread; the revision goes to review in the draft's place, without a
second critique, so reflection costs at most one critique and one revision per draft. The
reviewer is asked only after, about the revision alone: it never sees the draft the critic
sent back: a diff the critic sent back is never sent for review, in this round or a later
one (a revision that changed nothing ends the round as a rejection, a REJECT on the reflect
thread saying so). Both steps are journalled (DraftCritiqued, DraftRevised), and every token
they cost is billed on `<task>:reflect`, a bill line of its own.

The critic advises and the reviewer is the gate: a critic that gives no verdict (asked twice)
holds nothing back, and the draft goes to review as it is.

The critic is another agent, not the coder grading itself: a coder reading its own diff shares
its blind spots, so its critique would catch fewer defects than a second reader's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from runtime.events import CandidateCommitted, DraftCritiqued, DraftRevised
from runtime.messages import Performative

if TYPE_CHECKING:  # the harness calls this module; only its types are needed here
    from teams.repo_fix.harness import Harness

CRITIC = "critic"


def thread(task_id: str) -> str:
    """The thread (and bill line) reflection works on for a task."""
    return f"{task_id}:reflect"


def reflect(
    harness: Harness,
    task_id: str,
    brief: str,
    coder: str,
    draft: CandidateCommitted,
    tests: dict[str, Any] | None,
    round_no: int,
) -> tuple[CandidateCommitted, dict[str, Any] | None]:
    """Critique the draft; revise it once on a `revise`. What goes to review, and its evidence."""
    from teams.repo_fix.harness import NoReply  # here: the harness imports this module

    on = thread(task_id)
    try:
        request, reply = harness.request(
            CRITIC, on, {"commit": draft.commit, "diff": draft.diff, "tests": tests}
        )
    except NoReply:
        # The critic advises; the reviewer is the gate. Without a verdict (its two misses are
        # journalled) the draft goes to review as it is, and nothing waits for a person.
        return draft, tests
    assert reply.report is not None
    verdict, reasons = reply.report["verdict"], reply.report["reasons"]
    harness.post.send(
        Performative.DONE,
        CRITIC,
        "orchestrator",
        on,
        {"verdict": verdict, "reasons": reasons, "commit": draft.commit},
        in_reply_to=request.message_id,
    )
    harness.emit(
        DraftCritiqued,
        agent=CRITIC,
        task_id=task_id,
        commit=draft.commit,
        verdict=verdict,
        reasons=reasons,
        round=round_no,
    )
    if verdict != "revise":
        return draft, tests
    harness.sent_back.setdefault(task_id, {})[draft.diff] = reasons
    request, reply = harness.ask(
        coder, on, {"brief": brief, "critique": reasons, "draft": draft.commit}
    )
    revised, tests = harness.submit(task_id, coder, request, reply, f"round {round_no} revised")
    harness.emit(
        DraftRevised,
        agent=coder,
        task_id=task_id,
        draft=draft.commit,
        commit=revised.commit,
        round=round_no,
    )
    return revised, tests
