"""The repo-fix team's scripted presets, by name (the first is the team's default).

Each scenario scripts what the agents say (for the scripted model) and nothing else: what the
run comes to — integrated or not, green or not, escalated or halted — is what the harness
decides from the workspace and the journal.
"""

from __future__ import annotations

from typing import Any

from runtime.model import IfFailed, ModelResponse, call
from runtime.team import Scenario

PARSER = "textparse/parser.py"
PARSE_TESTS = "tests/test_parser.py"
SPLIT = '    fields = line.split(",")'
GUARD = "    if not line.strip():\n        return []\n" + SPLIT
SLUG = "slugkit/slug.py"
SLUG_TESTS = "tests/test_slug.py"
SLUG_BUG = '    return title.strip().lower().replace(" ", "-")'
SLUG_FIX = '    return "-".join(title.lower().split())'
EMPTY_TEST = 'def test_empty_input_has_no_fields():\n    assert parse("") == []\n'


def plan(usage: int, fix: str, review: str = "", verify: str = "") -> ModelResponse:
    tasks: list[dict[str, Any]] = [{"id": "T1", "kind": "fix", "brief": fix}]
    if review:
        tasks.append({"id": "T2", "kind": "review", "of": "T1", "brief": review})
    if verify:
        tasks.append({"id": "T3", "kind": "verify", "of": "T1", "brief": verify})
    return call("done", usage, tasks=tasks)


def accept(usage: int, reasons: str) -> ModelResponse:
    return call("done", usage, verdict="accept", reasons=reasons)


def reject(usage: int, reasons: str) -> ModelResponse:
    return call("done", usage, verdict="reject", reasons=reasons)


def green(usage: int, summary: str) -> ModelResponse:
    return call("done", usage, verdict="green", summary=summary)


PARSE_PLAN = plan(
    150,
    fix="Make parse('') return [] without changing how non-empty lines split; run the tests "
    "and include their result.",
    review="Review T1's diff against its test evidence.",
    verify="Run the whole suite on the integrated main branch.",
)
PARSE_CODER = [
    call("run_tests", 120),  # the first test run fails: that is how the coder learns why
    call("read_file", 90, path=PARSER),
    call("edit_file", 95, path=PARSER, old=SPLIT, new=GUARD),
    call("run_tests", 60),
    call("done", 40, summary="parse('') now returns []; 2 passed, 0 failed"),
]
PARSE_REVIEWER = [
    call("read_file", 30, path=PARSER),
    accept(
        40,
        "The guard returns [] for blank input and leaves splitting alone; the evidence "
        "shows 2 passed, 0 failed.",
    ),
]
TESTER = [call("run_tests", 90), green(30, "the whole suite passes on main")]
DOCS = [
    call(
        "write_file",
        60,
        path="docs/changelog.md",
        content="# Changelog\n\n- parse('') returns [] instead of [''].\n",
    ),
    call("done", 20, summary="recorded the fix in docs/changelog.md"),
]

FIRST_FLIGHT = Scenario(
    name="first-flight",
    description="The coder's first test run fails, the second passes; reviewed, integrated, green.",
    task="Make the failing parser test pass and leave the whole suite green.",
    settings={"template": "parse-empty"},
    scripts={
        "orchestrator": [PARSE_PLAN],
        "coder": PARSE_CODER,
        "reviewer": PARSE_REVIEWER,
        "tester": TESTER,
        "docs": DOCS,
        # --bidding: both coders bid in one cheap call; the lower bid wins and does the work
        "coder-a": [call("done", 25, bid=900)],
        "coder-b": [call("done", 30, bid=700), *PARSE_CODER],
    },
)

VAGUE_SUBTASK = Scenario(
    name="vague-subtask",
    description="A terse plan blurs fix and verify: coder and tester both edit the same test file.",
    task="Make the failing parser test pass and leave the whole suite green.",
    settings={"template": "parse-empty"},
    scripts={
        "orchestrator": [
            plan(
                90,
                fix="parse: empty input",
                review="review",
                verify="empty input: make sure it works and is tested",
            )
        ],
        "coder": [
            call("read_file", 90, path=PARSER),
            call("edit_file", 95, path=PARSER, old=SPLIT, new=GUARD),
            call(
                "edit_file",
                70,
                path=PARSE_TESTS,
                old=EMPTY_TEST,
                new=EMPTY_TEST
                + '\n\ndef test_blank_line_has_no_fields():\n    assert parse("   ") == []\n',
            ),
            call("run_tests", 60),
            call("done", 40, summary="guarded empty input and added a regression test"),
        ],
        "reviewer": [accept(40, "Small guard, with a regression test; 3 passed, 0 failed.")],
        "tester": [
            call(
                "edit_file",
                80,
                path=PARSE_TESTS,
                old="def test_fields_are_trimmed():",
                new="def test_whitespace_only_input_has_no_fields():\n"
                '    assert parse(" \\t ") == []\n\n\ndef test_fields_are_trimmed():',
            ),
            call("run_tests", 60),
            green(30, "empty input works and is tested"),
        ],
    },
)

SLUG_PLAN = plan(
    140,
    fix="Make slugify collapse runs of spaces into one hyphen; run the tests and include them.",
    review="Review T1's diff against its test evidence.",
    verify="Run the whole suite on the integrated main branch.",
)

SILENT_DROPOUT = Scenario(
    name="silent-dropout",
    description="The reviewer's process is down: the REQUEST is delivered and never answered.",
    task="Make the failing slug test pass and leave the whole suite green.",
    settings={"template": "slug-spaces"},
    scripts={
        "orchestrator": [SLUG_PLAN],
        "coder": [
            call("read_file", 80, path=SLUG),
            call("edit_file", 90, path=SLUG, old=SLUG_BUG, new=SLUG_FIX),
            call("run_tests", 60),
            call("done", 40, summary="slugify splits on any whitespace; 2 passed"),
        ],
        "tester": TESTER,
    },
    absent=("reviewer",),
)

SILENT_REVIEWER = Scenario(
    name="silent-reviewer",
    description="The reviewer is there but never answers: it keeps reading files. Its reply "
    "deadline (4 turns) passes, it is asked once more, then the task is escalated.",
    task="Make the failing slug test pass and leave the whole suite green.",
    settings={"template": "slug-spaces", "reply_turns": 4},
    scripts={
        "orchestrator": [SLUG_PLAN],
        "coder": SILENT_DROPOUT.scripts["coder"],
        # a different file each turn: busy, not looping (the loop breaker would stop a loop)
        "reviewer": [call("read_file", 30, path=(SLUG, SLUG_TESTS)[n % 2]) for n in range(8)],
        "tester": TESTER,
    },
)

PREMATURE_DONE = Scenario(
    name="premature-done",
    description="The coder says DONE without running tests; the reviewer rejects until it does.",
    task="Make the failing slug test pass and leave the whole suite green.",
    settings={"template": "slug-spaces"},
    scripts={
        "orchestrator": [SLUG_PLAN],
        "coder": [
            call("read_file", 80, path=SLUG),
            call("edit_file", 90, path=SLUG, old=SLUG_BUG, new=SLUG_FIX),
            call("done", 30, summary="fixed slugify; it certainly works now"),
            # round two, after the REJECT: bring the evidence
            call("run_tests", 60),
            call("done", 40, summary="slugify splits on any whitespace; 2 passed, 0 failed"),
        ],
        "reviewer": [
            reject(40, "No test output came with this change. Run the tests and send them."),
            accept(40, "Now with evidence: 2 passed, 0 failed. The change is minimal."),
        ],
        "tester": TESTER,
    },
)

FLAKY_TOOL = Scenario(
    name="flaky-tool",
    description="The test runner dies with exit 137 on the first run in a fresh checkout (the "
    "coder's workspace, the tester's worktree); the loop retries it after a backoff before the "
    "model sees, sparing the agent the model call it takes to run the tests again (with "
    "--retries 0 it sees the error and does).",
    task="Make the failing parser test pass and leave the whole suite green.",
    scripts={
        "orchestrator": [PARSE_PLAN],
        # the coder reacts to what it is shown: a dead runner is run again
        "coder": [PARSE_CODER[0], IfFailed(then=call("run_tests", 120)), *PARSE_CODER[1:]],
        "reviewer": PARSE_REVIEWER,
        "tester": [TESTER[0], IfFailed(then=call("run_tests", 90)), *TESTER[1:]],
    },
    settings={"template": "parse-flaky", "retries": 1},
)

BUDGET_STARVED = Scenario(
    name="budget-starved",
    description="The allowance is too small: the coder's share runs out mid-fix.",
    task="Make the failing slug test pass and leave the whole suite green.",
    scripts={
        "orchestrator": [SLUG_PLAN],
        "coder": [
            call("read_file", 90, path=SLUG),
            call("edit_file", 120, path=SLUG, old=SLUG_BUG, new=SLUG_FIX),
            call("run_tests", 60),
            call("done", 40, summary="fixed"),
        ],
        "reviewer": [accept(40, "fine")],
        "tester": TESTER,
    },
    settings={"template": "slug-spaces", "allowance": 400},
)

REJECT_LOOP = Scenario(
    name="reject-loop",
    description="Coder and reviewer disagree; the reject/redo loop hits its cap and escalates.",
    task="Make the failing parser test pass and leave the whole suite green.",
    scripts={
        "orchestrator": [PARSE_PLAN],
        "coder": [
            call("read_file", 90, path=PARSER),
            call(
                "edit_file",
                95,
                path=PARSER,
                old=SPLIT,
                new='    if line == "":\n        return []\n' + SPLIT,
            ),
            call("run_tests", 60),
            call("done", 40, summary="parse('') returns []; 2 passed"),
            call("run_tests", 60),
            call("done", 40, summary="the tests pass; the change is right as it is"),
        ],
        "reviewer": [
            reject(40, "A line of only spaces still parses to ['']: guard on line.strip()."),
            reject(40, "Unchanged: whitespace-only input is still wrong."),
        ],
        "tester": TESTER,
    },
    settings={"template": "parse-empty", "max_rounds": 2},
)

COMMA_SPACE = '    fields = line.split(", ")'  # a draft that no longer splits " a, b ,c" right
RUBBER_STAMP = Scenario(
    name="rubber-stamp",
    description="The reviewer accepts a change whose own test run fails; the merge gate "
    "refuses it on that evidence and sends it back; the coder's second round is green and "
    "merged. The reviewer's ACCEPT on failing tests is a finding.",
    task="Make the failing parser test pass and leave the whole suite green.",
    settings={"template": "parse-empty"},
    scripts={
        "orchestrator": [PARSE_PLAN],
        "coder": [
            call("read_file", 90, path=PARSER),
            call(
                "edit_file",
                95,
                path=PARSER,
                old=SPLIT,
                new="    if not line.strip():\n        return []\n" + COMMA_SPACE,
            ),
            call("run_tests", 60),  # 1 passed, 1 failed: the trimming test now fails
            call("done", 40, summary="parse('') now returns []"),
            # round two, sent back by the gate with the failing counts
            call("edit_file", 70, path=PARSER, old=COMMA_SPACE, new=SPLIT),
            call("run_tests", 60),
            call("done", 40, summary="split on ',' again; 2 passed, 0 failed"),
        ],
        "reviewer": [
            call("read_file", 30, path=PARSER),
            accept(40, "The guard returns [] for blank input; looks right."),  # on 1 failed
            accept(40, "Now 2 passed, 0 failed; the split is back on ','."),
        ],
        "tester": TESTER,
    },
)

VOTE = Scenario(
    name="vote",
    description="Three samples of the reviewer's verdict: one wrongly rejects a good fix; the "
    "majority accepts it, and the vote's cost is billed on T1:vote.",
    task="Make the failing parser test pass and leave the whole suite green.",
    settings={"template": "parse-empty", "votes": 3},
    scripts={
        "orchestrator": [PARSE_PLAN],
        "coder": PARSE_CODER,
        "reviewer": [
            *PARSE_REVIEWER,
            call("read_file", 30, path=PARSER),
            reject(40, "Splitting should happen before the guard."),  # the wrong sample
            *PARSE_REVIEWER,
        ],
        "tester": TESTER,
    },
)

EQUALS_GUARD = '    if line == "":'  # a draft's guard that misses whitespace-only lines
REFLECT = Scenario(
    name="reflect",
    description="A critic reads the coder's draft before review: its guard misses lines of "
    "only spaces, so it goes back once; the revision is reviewed and integrated, and the "
    "reviewer never sees the draft. Reflection is billed on T1:reflect.",
    task="Make the failing parser test pass and leave the whole suite green.",
    settings={"template": "parse-empty", "reflect": True},
    scripts={
        "orchestrator": [PARSE_PLAN],
        "coder": [
            call("read_file", 90, path=PARSER),
            call(
                "edit_file",
                95,
                path=PARSER,
                old=SPLIT,
                new=f"{EQUALS_GUARD}\n        return []\n{SPLIT}",
            ),
            call("run_tests", 60),
            call("done", 40, summary="parse('') returns []; 2 passed"),
            # the revision, after the critique
            call("edit_file", 70, path=PARSER, old=EQUALS_GUARD, new="    if not line.strip():"),
            call("run_tests", 60),
            call("done", 40, summary="blank and whitespace-only lines give []; 2 passed"),
        ],
        "critic": [
            call("read_file", 25, path=PARSER),
            call(
                "done",
                35,
                verdict="revise",
                reasons="A line of only spaces still parses to ['']: guard on line.strip().",
            ),
            # A second critique would send the revision back too: the harness never asks one.
            call("done", 35, verdict="revise", reasons="Still not sure about whitespace."),
        ],
        "reviewer": PARSE_REVIEWER,
        "tester": TESTER,
    },
)

# --- parallel writers (teams/repo_fix/parallel.py) ---------------------------------------------


def parallel_plan(usage: int, *fixes: tuple[str, list[str]]) -> ModelResponse:
    """Fixes T1, T2, ... each naming the files it writes; a review of each (the harness adds
    the verifies)."""
    tasks: list[dict[str, Any]] = [
        {"id": f"T{n}", "kind": "fix", "brief": brief, "files": files}
        for n, (brief, files) in enumerate(fixes, start=1)
    ]
    tasks += [
        {"id": f"T{len(fixes) + n}", "kind": "review", "of": f"T{n}", "brief": f"review T{n}"}
        for n in range(1, len(fixes) + 1)
    ]
    return call("done", usage, tasks=tasks)


TWO_BUGS = "Fix both failing tests, the parser's and the slug's, and leave the whole suite green."
PARSER_BRIEF = "Make parse('') return [] without changing how non-empty lines split."
SLUG_BRIEF = "Make slugify collapse runs of spaces into one hyphen."
WRITER_PARSER = [  # in its own worktree, it runs the tests of its own fix
    call("read_file", 90, path=PARSER),
    call("edit_file", 95, path=PARSER, old=SPLIT, new=GUARD),
    call("run_tests", 60, target=PARSE_TESTS),
    call("done", 40, summary="parse('') now returns []; 2 passed, 0 failed"),
]
WRITER_SLUG = [
    call("read_file", 80, path=SLUG),
    call("edit_file", 90, path=SLUG, old=SLUG_BUG, new=SLUG_FIX),
    call("run_tests", 60, target=SLUG_TESTS),
    call("done", 40, summary="slugify splits on any whitespace; 2 passed, 0 failed"),
]
REVIEW_BOTH = [
    *PARSE_REVIEWER,
    call("read_file", 30, path=SLUG),
    accept(40, "Splitting on any whitespace collapses the runs; 2 passed, 0 failed."),
]

PARALLEL_WRITERS = Scenario(
    name="parallel-writers",
    description="Two fixes at once: coder-a and coder-b each hold one as a commitment and "
    "write it in a git worktree of its own; each is reviewed and merged through the gate in "
    "turn, its commitment released. Green.",
    task=TWO_BUGS,
    settings={"template": "parse-and-slug", "parallel_writers": True},
    scripts={
        "orchestrator": [parallel_plan(160, (PARSER_BRIEF, [PARSER]), (SLUG_BRIEF, [SLUG]))],
        "coder-a": WRITER_PARSER,
        "coder-b": WRITER_SLUG,
        "reviewer": REVIEW_BOTH,
        "tester": TESTER * 2,
    },
)

LOST_WRITER = Scenario(
    name="lost-writer",
    description="coder-b takes its fix and goes quiet (it keeps reading files): it misses its "
    "reply deadline twice, its lease on the fix is revoked, and the commitment moves with the "
    "lease to coder-a, who writes both fixes. Green; no commitment left open.",
    task=TWO_BUGS,
    settings={"template": "parse-and-slug", "parallel_writers": True, "reply_turns": 4},
    scripts={
        "orchestrator": [parallel_plan(160, (PARSER_BRIEF, [PARSER]), (SLUG_BRIEF, [SLUG]))],
        "coder-a": [*WRITER_PARSER, *WRITER_SLUG],
        # busy, never answering: a different file each turn (not a loop the breaker stops)
        "coder-b": [call("read_file", 30, path=(SLUG, SLUG_TESTS)[n % 2]) for n in range(8)],
        "reviewer": REVIEW_BOTH,
        "tester": TESTER * 2,
    },
)

DEADLOCKED_WRITERS = Scenario(
    name="deadlocked-writers",
    description="Each fix names both files, in opposite orders: coder-a holds the parser and "
    "waits for the slug module, coder-b holds the slug module and waits for the parser. The "
    "wait-for graph refuses the youngest wait (coder-b's); it gives its file back and writes "
    "after coder-a's merge. Green.",
    task=TWO_BUGS,
    settings={"template": "parse-and-slug", "parallel_writers": True},
    scripts={
        "orchestrator": [
            parallel_plan(
                160,
                (
                    PARSER_BRIEF + " Keep slugify's handling of blank titles in step.",
                    [PARSER, SLUG],
                ),
                (SLUG_BRIEF + " Keep parse's handling of blank lines in step.", [SLUG, PARSER]),
            )
        ],
        "coder-a": WRITER_PARSER,
        "coder-b": WRITER_SLUG,
        "reviewer": REVIEW_BOTH,
        "tester": TESTER * 2,
    },
)

SCENARIOS = {
    s.name: s
    for s in (
        FIRST_FLIGHT,
        VAGUE_SUBTASK,
        SILENT_DROPOUT,
        SILENT_REVIEWER,
        PREMATURE_DONE,
        FLAKY_TOOL,
        BUDGET_STARVED,
        REJECT_LOOP,
        RUBBER_STAMP,
        VOTE,
        REFLECT,
        PARALLEL_WRITERS,
        LOST_WRITER,
        DEADLOCKED_WRITERS,
    )
}
