"""The tester's verification of an integration, in a git worktree of its own at the integrated
commit: what it writes there is never reviewed, so it goes away with the worktree and reaches
nobody's candidate. `Harness` does the asking; this is where the tester works while it is asked.
"""

from __future__ import annotations

from typing import Any

from runtime import workspace
from runtime.events import Integrated, WorktreeAdded, WorktreeRemoved
from runtime.messages import Performative
from teams.repo_fix.harness import Harness, Stop

DONE = Performative.DONE


def verify(h: Harness, check: dict[str, Any], integrated: Integrated) -> None:
    """The tester verifies the integration in a worktree of its own at the integrated commit
    (`<workspace>.tester-<check>`), taken away with whatever it wrote once its report is in:
    a test it added was never reviewed, so it reaches no candidate and no commit (in the
    workspace the next coder's candidate, `git add -A`, took it in as that coder's)."""
    name = f"tester-{check['id']}"
    given = give_worktree(h, "tester", name, integrated.commit, check["id"])
    try:
        request, reply = h.ask(
            "tester", check["id"], {"brief": check["brief"], "commit": integrated.commit}
        )
    except Stop:
        take_worktree(h, "tester", name, given, check["id"])  # the run ends here
        raise
    take_worktree(h, "tester", name, given, check["id"])
    assert reply.report is not None
    h.post.send(
        DONE,
        "tester",
        "orchestrator",
        check["id"],
        {
            "verdict": reply.report["verdict"],
            "summary": reply.report["summary"],
            "tests": h.evidence("tester", reply.started),
        },
        in_reply_to=request.message_id,
    )


def give_worktree(h: Harness, agent: str, name: str, commit: str, task_id: str) -> bool:
    """`agent` works from here on in a worktree `name` of its own at `commit` (WorktreeAdded:
    made once, read back on resume and replay, which touch no git); False, and it works in
    the workspace as before, where the record goes on without one (a journal from before
    the tester had a worktree)."""
    if not h.session.live and not isinstance(h.session.peek(), WorktreeAdded):
        return False
    h.session.activity(
        WorktreeAdded,
        lambda: workspace.add_checkout(h.path, name, commit),
        agent=agent,
        task_id=task_id,
    )
    h.where[agent] = workspace.worktree_path(h.path, name)
    return True


def take_worktree(h: Harness, agent: str, name: str, given: bool, task_id: str) -> None:
    """`agent` is done in its worktree: it is taken away with what it held that no commit
    has (WorktreeRemoved names those paths), and the agent is back in the workspace."""
    if not given:
        return
    h.session.activity(
        WorktreeRemoved,
        lambda: workspace.discard_checkout(h.path, name),
        agent=agent,
        task_id=task_id,
    )
    h.where.pop(agent, None)
