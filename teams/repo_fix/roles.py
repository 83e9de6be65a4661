"""The repo-fix team's roles: one construction, different prompts, tools and standing.

A role is a jurisdiction, not a job title: what the agent sees (its mail, never the
orchestration history), which tools it is shown and may run, where it may write, and what its
report must contain before it may call done.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from runtime.loop import done_tool
from runtime.tools import Tool

READ = ("list_files", "read_file")
WRITE = ("write_file", "edit_file")


def _tests_only(path: str) -> bool:
    return path.startswith("tests/")


def _docs_only(path: str) -> bool:
    return path.startswith("docs/")


def _never(path: str) -> bool:
    return False


@dataclass(frozen=True)
class Role:
    name: str
    system: str
    standing: str  # the instruction every run of this role starts from; the work comes by mail
    allow: tuple[str, ...]
    writable: Callable[[str], bool] | None
    report: Tool
    may_use_reserve: bool = False
    share: float = 0.1  # of the run's allowance


PLAN_SCHEMA: dict[str, Any] = {
    "type": "array",
    "minItems": 1,
    "items": {
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": "^T[0-9]+$"},
            "kind": {"enum": ["fix", "review", "verify", "docs"]},
            "brief": {"type": "string", "minLength": 1},
            "of": {"type": "string", "pattern": "^T[0-9]+$"},
        },
        "required": ["id", "kind", "brief"],
        "additionalProperties": False,
    },
}

ORCHESTRATOR = Role(
    name="orchestrator",
    system=(
        "You are the orchestrator of a team that fixes a git repository: a coder, a reviewer "
        "and a tester. Decompose the task into a typed task list and call done with it: each "
        "task has an id (T1, T2, ...), a kind (fix, review, verify or docs), a brief that says "
        "exactly what the task covers and what evidence finishes it, and for review, verify "
        "and docs tasks the id of the fix they are `of`. You may look at the repository first."
    ),
    standing="Plan the work for this task.",
    allow=READ,
    writable=_never,
    report=done_tool({"tasks": PLAN_SCHEMA}, ["tasks"]),
    share=0.1,
)

# With parallel writers each fix names the files it writes: the harness leases them to the fix's
# writer before it starts, and two fixes that need each other's files wait for each other.
# A file's name is part of its lease's stream (`lease-<run>:file:<path>`), which the store holds
# in 200 characters and an import reads no longer: so a path inside the workspace of at most
# MAX_LEASED_PATH characters, none of them a control character. A path of 300 characters was
# leased under a stream past the column (PostgreSQL's refuses such a write; SQLite kept it, and the
# run's export did not import again).
MAX_LEASED_PATH = 120  # "lease-", a run id of 64, ":file:", and this: under 200
# No control character anywhere (a trailing newline too), not absolute, no `.` or `..` part.
LEASED_PATH = r"^(?![\s\S]*[\x00-\x1f\x7f-\x9f])(?!/)(?!(.*/)?\.\.?(/|$))"
PARALLEL_PLAN_SCHEMA: dict[str, Any] = {
    **PLAN_SCHEMA,
    "items": {
        **PLAN_SCHEMA["items"],
        "properties": {
            **PLAN_SCHEMA["items"]["properties"],
            "files": {
                "type": "array",
                "items": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": MAX_LEASED_PATH,
                    "pattern": LEASED_PATH,
                    "description": "a file's path relative to the workspace root",
                },
            },
        },
    },
}

PARALLEL_ORCHESTRATOR = Role(
    name="orchestrator",
    system=ORCHESTRATOR.system
    + " Two coders work at the same time, each fix in its own worktree: split the task into "
    "independent fixes, and give each fix the `files` it will write.",
    standing=ORCHESTRATOR.standing,
    allow=READ,
    writable=_never,
    report=done_tool({"tasks": PARALLEL_PLAN_SCHEMA}, ["tasks"]),
    share=0.1,
)

CODER = Role(
    name="coder",
    system=(
        "You are the coder. Your mail holds a REQUEST naming a task. Work in the repository "
        "with list_files, read_file, edit_file, write_file and run_tests. Change the code, run "
        "the tests until they pass, then call done with a summary. A REJECT in your mail gives "
        "the reviewer's reasons: address them. Evidence matters: your report carries the "
        "result of your last run_tests."
    ),
    standing="Do the work your mail asks for.",
    allow=(*READ, *WRITE, "run_tests"),
    writable=None,
    report=done_tool({"summary": {"type": "string", "minLength": 1}}, ["summary"]),
    share=0.45,
)

REVIEWER = Role(
    name="reviewer",
    system=(
        "You are the reviewer. Your mail holds a REQUEST with a diff and the test output that "
        "came with it, nothing else. You may read files; you may not edit anything. Judge the "
        "change on its evidence and call done with verdict accept or reject and your reasons."
    ),
    standing="Review the change in your mail.",
    allow=READ,
    writable=_never,
    report=done_tool(
        {"verdict": {"enum": ["accept", "reject"]}, "reasons": {"type": "string", "minLength": 1}},
        ["verdict", "reasons"],
    ),
    may_use_reserve=True,
    share=0.15,
)

CRITIC = Role(
    name="critic",
    system=(
        "You are the critic. Your mail holds a REQUEST with a coder's draft diff and the test "
        "output that came with it, before anyone reviews it. You may read files; you may not "
        "edit anything. Look for what a reviewer would reject. Call done with verdict pass "
        "(send it to review as it is) or revise (the coder gets one revision), and reasons "
        "the coder can act on."
    ),
    standing="Critique the draft in your mail.",
    allow=READ,
    writable=_never,
    report=done_tool(
        {"verdict": {"enum": ["pass", "revise"]}, "reasons": {"type": "string", "minLength": 1}},
        ["verdict", "reasons"],
    ),
    share=0.1,
)

TESTER = Role(
    name="tester",
    system=(
        "You are the tester. Your mail holds a REQUEST to verify the integrated result. Run "
        "the whole suite; you may add tests under tests/, never change source files. Call done "
        "with verdict green or red and a summary."
    ),
    standing="Verify what your mail asks you to verify.",
    allow=(*READ, *WRITE, "run_tests"),
    writable=_tests_only,
    report=done_tool(
        {"verdict": {"enum": ["green", "red"]}, "summary": {"type": "string", "minLength": 1}},
        ["verdict", "summary"],
    ),
    may_use_reserve=True,
    share=0.15,
)

DOCS = Role(
    name="docs",
    system=(
        "You are the docs writer. Your mail holds the summary and diff of a shipped change. "
        "Record it in docs/changelog.md. You may write only under docs/."
    ),
    standing="Document the change in your mail.",
    allow=(*READ, *WRITE),
    writable=_docs_only,
    report=done_tool({"summary": {"type": "string", "minLength": 1}}, ["summary"]),
    share=0.05,
)

BIDDER_REPORT = done_tool(
    {"bid": {"type": "integer", "minimum": 1, "description": "your estimate in tokens"}}
)

ROLES = {r.name: r for r in (ORCHESTRATOR, CODER, REVIEWER, CRITIC, TESTER, DOCS)}
VERIFICATION_RESERVE = 0.2  # of the allowance, for the reviewer and the tester only


def role_of(agent: str) -> Role:
    """coder-a and coder-b are coders: the role is the name before any suffix."""
    return ROLES[agent.split("-")[0]]
