"""The plan the harness runs: the orchestrator's typed task list, with the gates it forgot."""

from __future__ import annotations

from typing import Any


def accept_plan(
    proposed: list[dict[str, Any]], docs: bool
) -> tuple[list[dict[str, Any]], list[str]]:
    """The plan the harness will run, and what it had to add to the orchestrator's.

    The gate does not depend on the orchestrator remembering it: every fix gets a review and a
    verify, and a run with a docs agent gets a docs task. A plan with repeated ids, no fix, or a
    task `of` something that is not a fix is refused (ValueError).
    """
    tasks = [dict(t) for t in proposed]
    ids = [t["id"] for t in tasks]
    if len(set(ids)) != len(ids):
        raise ValueError("task ids repeat")
    fixes = [t["id"] for t in tasks if t["kind"] == "fix"]
    if not fixes:
        raise ValueError("it has no fix task")
    for t in tasks:
        if t["kind"] != "fix" and t.get("of") not in fixes:
            raise ValueError(f"{t['id']} is a {t['kind']} of {t.get('of')!r}, which is not a fix")
    if not docs:
        tasks = [t for t in tasks if t["kind"] != "docs"]  # this run has no docs agent
    amended = []

    def add(kind: str, of: str, brief: str, why: str) -> None:
        taken = {t["id"] for t in tasks}
        new_id = next(f"T{n}" for n in range(1, len(taken) + 2) if f"T{n}" not in taken)
        tasks.append({"id": new_id, "kind": kind, "of": of, "brief": brief})
        amended.append(f"added {new_id}: {why}")

    for fix in fixes:
        for kind in ("review", "verify"):
            if not any(t["kind"] == kind and t.get("of") == fix for t in tasks):
                add(kind, fix, f"{kind} {fix}", f"every fix needs a {kind}")
    if docs and not any(t["kind"] == "docs" for t in tasks):
        add(
            "docs",
            fixes[0],
            "record the shipped change in docs/changelog.md",
            "this run has a docs agent",
        )
    return tasks, amended
