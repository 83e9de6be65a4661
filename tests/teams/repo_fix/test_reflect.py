"""Reflection (seed 01, exercise 8): a critic reads the coder's draft before review, a draft it
sends back is revised at most once, the reviewer sees only the revision, and what reflection
cost has a bill line of its own."""

from __future__ import annotations

import json

import pytest

from runtime import diagnose, flight, metrics, views
from runtime.events import (
    CandidateCommitted,
    DeadlinePassed,
    DraftCritiqued,
    DraftRevised,
    Integrated,
    MessageDelivered,
    MessageSent,
    ModelCalled,
    RunStarted,
    TaskEscalated,
    ToolReturned,
)
from runtime.journal import MemoryJournal
from runtime.jsonl import JsonlJournal
from runtime.messages import Message
from runtime.model import ScriptedClient, call, say
from runtime.session import Session
from runtime.team import Services
from teams import TEAMS
from teams.repo_fix.scenarios import REFLECT

pytestmark = pytest.mark.slow

DRAFT_LINE = '+    if line == "":'  # the guard the critic sends back
REVISED_LINE = "+    if not line.strip():"


def shows(window: str, line: str) -> bool:
    """Whether the window shows the line, as it is or as a JSON string (how mail reads)."""
    return line in window or json.dumps(line)[1:-1] in window


def received(events, agent: str) -> list[str]:
    """Everything each of the agent's model calls can have been shown, read from the journal:
    its runs' tasks, every message delivered to it before the call, and its tool results. The
    loop builds a window from nothing else (the system prompt is the role's, not the run's)."""
    sent = {e.message_id: e for e in events if isinstance(e, MessageSent)}
    seen: list[str] = []
    shown: list[str] = []
    for e in events:
        if e.agent != agent:
            continue
        if isinstance(e, RunStarted):
            seen.append(e.task)
        elif isinstance(e, MessageDelivered) and e.recipient == agent:
            seen.append(Message.from_event(sent[e.message_id]).render())
        elif isinstance(e, ToolReturned):
            seen.append(f"{e.result} {e.error}")
        elif isinstance(e, ModelCalled):
            shown.append("\n".join(seen))  # what was there to be shown at this call
    return shown


@pytest.fixture(scope="module")
def flown(fly_team):
    return fly_team("reflect")


def test_the_reviewer_never_sees_the_draft_the_critic_sent_back(flown):
    assert flown.outcome.status == "done", flown.outcome.reason
    events = flown.events
    [critique] = [e for e in events if isinstance(e, DraftCritiqued)]
    [revision] = [e for e in events if isinstance(e, DraftRevised)]
    assert (critique.verdict, critique.agent) == ("revise", "critic")
    assert revision.draft == critique.commit != revision.commit
    drafts = {e.commit: e for e in events if isinstance(e, CandidateCommitted)}
    assert DRAFT_LINE in drafts[critique.commit].diff
    assert DRAFT_LINE not in drafts[revision.commit].diff  # the diff is against main

    critic, reviewer = received(events, "critic"), received(events, "reviewer")
    assert critic and all(shows(window, DRAFT_LINE) for window in critic)  # the critic saw it
    assert reviewer and not any(shows(window, DRAFT_LINE) for window in reviewer)
    assert not any(critique.commit in window for window in reviewer)  # not even its commit id
    assert all(shows(window, REVISED_LINE) for window in reviewer)
    # and what was reviewed and merged is the revision
    [merged] = [e for e in events if isinstance(e, Integrated)]
    accept = next(e for e in events if isinstance(e, MessageSent) and e.performative == "accept")
    assert accept.payload["commit"] == revision.commit and merged.approval == accept.message_id


def test_the_draft_is_critiqued_once_and_revised_at_most_once(flown):
    events = flown.events
    requests = [
        (e.recipient, e.task_id)
        for e in events
        if isinstance(e, MessageSent) and e.performative == "request"
    ]
    # The critic's script holds a second "revise": it is never asked for it.
    assert requests.count(("critic", "T1:reflect")) == 1
    assert requests.count(("coder", "T1:reflect")) == 1
    assert len([e for e in events if isinstance(e, DraftRevised)]) == 1
    order = [e.kind for e in events if isinstance(e, DraftCritiqued | DraftRevised | Integrated)]
    assert order == ["DraftCritiqued", "DraftRevised", "Integrated"]
    # The reviewer was asked once, after the revision, about the revision's commit.
    [review] = [e for e in events if isinstance(e, MessageSent) and e.recipient == "reviewer"]
    assert events.index(review) > next(
        i for i, e in enumerate(events) if isinstance(e, DraftRevised)
    )


def test_what_reflection_cost_is_a_bill_line_of_its_own(flown):
    bill = views.bill(flown.records)
    # the critique (25 + 35) and the revision (70 + 60 + 40)
    assert bill["tasks"]["T1:reflect"]["tokens"] == 25 + 35 + 70 + 60 + 40
    assert bill["tasks"]["T1:reflect"]["calls"] == 5
    # T1 is the draft (90 + 95 + 60 + 40) and the one review (30 + 40)
    assert bill["tasks"]["T1"]["tokens"] == 285 + 70
    assert bill["agents"]["critic"] == {**bill["agents"]["critic"], "tokens": 60, "calls": 2}
    assert bill["balanced"] and bill["spent"] == bill["total"]["tokens"]


def test_a_reflected_run_replays_and_its_metrics_and_diagnosis_hold(flown):
    assert flight.replay(JsonlJournal(flown.path), flown.run_id).identical
    assert diagnose.diagnose(flown.records) == []
    folded = metrics.metrics(flown.records)
    assert folded["handoff_failure_rate"]["value"] == 0.0
    assert folded["coordination_cost_per_verified_success"]["verified_successes"] == 1
    assert views.resume_point(flown.records)["stage"] == "complete"


def test_without_reflect_no_critic_is_asked(fly_team):
    events = fly_team("first-flight").events
    assert not [e for e in events if isinstance(e, DraftCritiqued | DraftRevised)]
    assert not [e for e in events if e.agent == "critic"]


def test_a_scripted_reflection_needs_a_critic_script():
    with pytest.raises(flight.FlightError, match="scripts no critic for --reflect"):
        flight.plan("repo-fix", "first-flight", "r-000000000001", reflect=True)
    # with a critic on a model, the same scenario may reflect
    config = flight.plan(
        "repo-fix", "first-flight", "r-000000000001", reflect=True, models={"critic": "endpoint"}
    )
    assert config.settings.reflect


def test_a_revision_that_changed_nothing_is_not_sent_for_review(tmp_path):
    """The coder stands by its draft: the critic's verdict stands, the round ends as a
    rejection, and only the next round's different diff reaches the reviewer."""

    coder = REFLECT.scripts["coder"]
    scripts = {
        **REFLECT.scripts,
        "coder": [
            *coder[:4],  # the draft
            call("run_tests", 60),  # the "revision": nothing changed
            call("done", 40, summary="the draft is right as it is"),
            *coder[4:],  # round two: the fix the critic asked for
        ],
    }
    finished, events = fly_scripts(tmp_path, "r-unchanged", scripts)
    assert finished.status == "done", finished.reason
    [critique] = [e for e in events if isinstance(e, DraftCritiqued)]
    [revision] = [e for e in events if isinstance(e, DraftRevised)]
    assert revision.commit == revision.draft == critique.commit  # nothing changed
    refusal = next(e for e in events if isinstance(e, MessageSent) and e.performative == "reject")
    assert (refusal.sender, refusal.recipient, refusal.task_id) == (
        "orchestrator",
        "coder",
        "T1:reflect",
    )
    assert refusal.payload["reasons"].startswith("unchanged since the critic sent it back")
    reviewer = received(events, "reviewer")
    assert len(reviewer) == 2  # one review (read, then verdict), of round two's diff
    assert not any(shows(window, DRAFT_LINE) for window in reviewer)
    assert all(shows(window, REVISED_LINE) for window in reviewer)
    # one critique per task: round two went straight to review
    assert [e.task_id for e in events if isinstance(e, RunStarted) and e.agent == "critic"] == [
        "T1:reflect"
    ]


def fly_scripts(tmp_path, run_id, scripts):
    team, journal = TEAMS["repo-fix"], MemoryJournal()
    config = flight.plan("repo-fix", "reflect", run_id)
    clients = {a: ScriptedClient(scripts.get(a, []), a) for a in team.agents}
    finished = team.fly(Session(journal, run_id), config, clients, tmp_path, Services())
    return finished, [r.event for r in journal.read(f"run-{run_id}")]


def test_a_critic_that_gives_no_verdict_holds_nothing_back(tmp_path):
    """The critic advises and the reviewer is the gate: asked twice without a verdict, the
    draft goes to review as it is, and nobody is asked to decide."""
    mumbling = [say("Let me think about whitespace.", 20)] * 4  # prose, nudged, prose: twice
    finished, events = fly_scripts(
        tmp_path,
        "r-silent-critic",
        {**REFLECT.scripts, "coder": REFLECT.scripts["coder"][:4], "critic": mumbling},
    )
    assert finished.status == "done", finished.reason
    missed = [e for e in events if isinstance(e, DeadlinePassed)]
    assert [(e.awaited, e.task_id, e.attempt) for e in missed] == [
        ("critic", "T1:reflect", 1),
        ("critic", "T1:reflect", 2),
    ]
    assert not [e for e in events if isinstance(e, DraftCritiqued | DraftRevised | TaskEscalated)]
    assert all(shows(window, DRAFT_LINE) for window in received(events, "reviewer"))
