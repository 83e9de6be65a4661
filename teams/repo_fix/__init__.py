"""The repo-fix team: orchestrator, coder, reviewer and tester on a real git repository.

The protocol, enforced by the harness rather than by prompts:

    plan      the orchestrator's typed task list (the harness adds a review and a verify it forgot)
    fix       REQUEST to the coder; its report becomes DONE carrying the candidate's diff and the
              test evidence the journal shows (not what the coder claims)
    reflect   (optional) a critic reads the draft first; a `revise` gets one revision, and the
              reviewer sees only what comes of it (`reflect`)
    review    REQUEST to the reviewer with the diff and test output only; its report becomes
              ACCEPT or REJECT; a REJECT goes back to the coder, at most `max_rounds` times
    integrate a real merge, and only with an ACCEPT on the task thread for that very commit
              whose test evidence shows no failures (an ACCEPT of failing tests goes back to
              the coder as a round)
    verify    REQUEST to the tester, who works in a worktree of its own at the integrated commit,
              taken away with what it wrote (never reviewed, so no one's candidate); then the
              harness runs the suite itself: green is a fact the repository certifies, not a
              judgement anyone renders

Every awaited reply has a deadline (the recipient's turns): a silent agent gets one re-issued
REQUEST, then the task is escalated with its reason. Nothing waits forever.

    settings   RepoFixSettings: template, bidding, docs, max_rounds, votes, reflect
    roles      what each agent sees, may use and must report
    plan       the accepted plan (gates added)
    harness    the protocol's steps
    reflect    the optional critique before review
    flight     the steps strung together, and the verdict
    scenarios  the scripted presets (the first is the default)

May import `runtime` and `teams.repos`; never another team.
"""

from __future__ import annotations

from runtime.team import Option, Team
from teams.repo_fix.flight import fly_scenario, vet
from teams.repo_fix.scenarios import SCENARIOS
from teams.repo_fix.settings import RepoFixSettings

TEAM = Team(
    name="repo-fix",
    agents=(
        "orchestrator",
        "coder",
        "coder-a",
        "coder-b",
        "reviewer",
        "critic",
        "tester",
        "docs",
    ),
    roles={"coder": "writes", "reviewer": "reviews"},
    scenarios=SCENARIOS,
    fly=fly_scenario,
    settings=RepoFixSettings,
    options=(
        Option(
            "--bidding",
            "bidding",
            "repo-fix: contract-net bidding between coders",
            kind="switch",
            refusal="has no contract-net bidding (only repo-fix bids)",
        ),
        Option(
            "--docs",
            "docs",
            "repo-fix: add the docs agent (writes docs/ only)",
            kind="switch",
            refusal="has no docs agent (only repo-fix has one)",
        ),
        Option(
            "--reflect",
            "reflect",
            "repo-fix: a critic reads each draft before review; one revision on 'revise'",
            kind="switch",
            refusal="has no reflection step (only repo-fix has one)",
        ),
        Option(
            "--votes",
            "votes",
            "samples of a critical decision, and their majority: repo-fix's review, "
            "support-desk's refund (1, 3 or 5)",
            kind="int",
            refusal="has no voted decision (only repo-fix and support-desk have one)",
        ),
        Option(
            "--max-rounds",
            "max_rounds",
            "repo-fix: REJECT/redo rounds before escalating",
            kind="int",
            refusal="has no review rounds (only repo-fix has them)",
        ),
    ),
    vet=vet,
)

__all__ = ["TEAM", "RepoFixSettings"]
