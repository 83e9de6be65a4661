"""The mutation gate's refusals, the agents' structured statuses, and the worktrees given out
(parallel writers', the tester's): what the harness decided about a change, an agent's last
word, and a workspace."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from runtime.events.base import Event

# The five things the mutation gate checks, in the order it checks them.
GateCheck = Literal["intent", "lease", "authority", "evidence", "idempotency"]


class MutationRefused(Event):
    """The mutation gate refused a change (an effect, a merge): which of its five checks failed,
    what the mutation held and what the record says instead. Nothing was written or touched.

    `call` (v2) names the tool call refused (runtime/tools.py `Call.ref`): the same call run
    again (a resumed step's, its ToolReturned never written) finds this refusal and answers it,
    where judging again journalled a second one, in the words of the record as it stood then.
    v1 kept no call: its default, None, says no tool call's (or not recorded)."""

    v: ClassVar[int] = 2
    kind: ClassVar[str] = "MutationRefused"
    what: str
    actor: str
    capability: str
    check: GateCheck
    key: str = ""
    held: Any = None
    current: Any = None
    reason: str
    call: str | None = None


class StatusReported(Event):
    """An agent's last word as a structured status (seed 02 §34, §36): what it said, what the
    harness records, and whose word that is (`agent`: its own, in the vocabulary; `harness`:
    read from how its run ended)."""

    kind: ClassVar[str] = "StatusReported"
    status: str
    said: str | None = None
    source: Literal["agent", "harness"] = "harness"
    reason: str = ""


class StatusNormalised(Event):
    """An agent said a status outside the vocabulary: it is not trusted, and the harness's
    status (from how the run ended) is recorded instead."""

    kind: ClassVar[str] = "StatusNormalised"
    said: Any = None
    status: str
    reason: str


class WorktreeAdded(Event):
    """A parallel writer got a git worktree of its own, on its own branch, from a base commit;
    or an agent that commits nothing (the repo-fix tester) one at the commit it looks at, on
    no branch (`branch` empty, `base` that commit)."""

    kind: ClassVar[str] = "WorktreeAdded"
    writer: str
    branch: str
    base: str
    # Its directory's name beside the workspace (`<workspace>.<writer>`). A writer's worktree
    # recorded before it was named so holds the absolute path on the server that made it: read
    # as it is, nothing replays from it (where a worktree lives is workspace.worktree_path's).
    path: str


class WorktreeRemoved(Event):
    """A worktree given out was taken away, with what it held that no commit has (`discarded`:
    the paths written, changed or deleted there, never reviewed and now gone)."""

    kind: ClassVar[str] = "WorktreeRemoved"
    writer: str
    path: str
    discarded: list[str] = Field(default_factory=list)


class IntentCarried(Event):
    """The intent a team's run serves, with the version it started under: every mutation the
    run makes carries it, and the gate refuses one once a person has superseded it."""

    kind: ClassVar[str] = "IntentCarried"
    intent_id: str
    intent_version: int
    statement: str = ""
