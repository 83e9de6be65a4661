"""A fix's rounds in the repo-fix team: the coder's candidate, the critic's look when the team
reflects, the reviewer's verdict (a vote of several samples where the team asks for one), and
the merge through the mutation gate; back to the coder when the gate refuses, until the round
cap, then to a person (teams/repo_fix/__init__.py says what each step guarantees). The steps
themselves are the Harness's.
"""

from __future__ import annotations

from typing import Any

from runtime.events import CandidateCommitted, Integrated, VoteTaken
from runtime.messages import Message
from teams.repo_fix import reflect
from teams.repo_fix.harness import ACCEPT, REJECT, Harness, Reply


def fix_rounds(
    h: Harness,
    fix: dict[str, Any],
    coder: str,
    drafted: tuple[CandidateCommitted, dict[str, Any] | None] | None = None,
) -> Integrated:
    """Fix, review, try to integrate; back to the coder when the gate refuses, until the
    round cap. The gate, not the verdict branch, is what decides whether a merge happens.
    `drafted`: the first round's candidate, when the coder drafted it already (a parallel
    writer drafts before anyone is reviewed)."""
    task_id = fix["id"]
    h.awarded[task_id] = coder  # the gate's authority: only its candidates are merged
    payload: dict[str, Any] = {"brief": fix["brief"]}
    while True:  # until integrated, or a person discards the task
        red = 0  # rounds of this set whose ACCEPT the gate refused on failing tests
        clashed = 0  # rounds of this set whose merge conflicted with main
        for round_no in range(1, h.settings.max_rounds + 1):
            if drafted is not None:
                (candidate, tests), drafted = drafted, None
            else:
                request, reply = h.ask(coder, task_id, payload)
                candidate, tests = h.submit(task_id, coder, request, reply, f"round {round_no}")
            if h.settings.reflect and task_id not in h.reflected:
                h.reflected.add(task_id)  # once per task: at most one revision
                # A draft the critic sends back is replaced before review: the reviewer
                # never sees it.
                candidate, tests = reflect.reflect(
                    h, task_id, fix["brief"], coder, candidate, tests, round_no
                )
            refused = h.sent_back.get(task_id, {}).get(candidate.diff)
            if refused is not None:
                # A diff the critic sent back never reaches review, however it comes back
                # (a revision that changed nothing, say): the round ends as a rejection.
                reasons = f"unchanged since the critic sent it back: {refused}"
                h.post.send(
                    REJECT,
                    "orchestrator",
                    coder,
                    reflect.thread(task_id),
                    {"commit": candidate.commit, "reasons": reasons},
                )
                payload = {"brief": fix["brief"], "rejected": reasons, "round": round_no + 1}
                continue
            # The reviewer sees the artefact and its evidence, not the coder's rationale.
            review_request, verdict = review(
                h, task_id, {"commit": candidate.commit, "diff": candidate.diff, "tests": tests}
            )
            assert verdict.report is not None
            accepted = verdict.report["verdict"] == "accept"
            h.post.send(
                ACCEPT if accepted else REJECT,
                "reviewer",
                "orchestrator",
                task_id,
                {
                    "commit": candidate.commit,
                    "reasons": verdict.report["reasons"],
                    "tests": tests,
                },
                in_reply_to=review_request.message_id,
            )
            integrated = h.integrate(task_id, candidate, tests)
            if integrated is not None:
                h.merged[task_id] = candidate
                return integrated
            gated = h.refused
            rejected = verdict.report["reasons"]
            if accepted and gated is not None and gated.check == "evidence":
                # Accepted, and its own tests fail: the gate's reason, not the reviewer's
                # praise, is what the coder has to mend. (Never so in a journal from before
                # the gate read the tests: an ACCEPT of the commit was all its evidence.)
                red += 1
                rejected = gated.reason
            if accepted and gated is None and h.clash:
                # Another fix, merged first, changed the same files: this coder's candidate
                # can go in without its own changes to them.
                clashed += 1
                rejected = f"{h.clash}; take your changes to those files back"
            if gated is not None and gated.check != "evidence":
                # Another round cannot mend a superseded intent, a lost lease, a coder
                # without the authority or a spent key: a person decides.
                h.escalate(
                    task_id,
                    "other",
                    round_no,
                    gated.reason,
                    f"the merge of {task_id} was refused at the mutation gate "
                    f"({gated.check}): {gated.reason}",
                )
            payload = {"brief": fix["brief"], "rejected": rejected, "round": round_no + 1}
        cap = h.settings.max_rounds
        # The words of a cap reached by the reviewer's REJECTs alone are those of the
        # journals written before the gate read the tests (a replay checks them).
        reason = f"the reviewer rejected {task_id} {cap} times (the cap is {cap})"
        why = []
        if red:
            why.append(
                f"{red} of them the reviewer accepted it with failing tests, which the "
                "mutation gate refused"
            )
        if clashed:
            why.append(f"{clashed} of them its merge into main conflicted")
        if why:
            reason = f"{task_id} went back to its coder {cap} times (the cap is {cap}): "
            reason += "; ".join(why)
        h.escalate(task_id, "reject_cap", cap, str(payload.get("rejected", "")), reason)
        # a person sent it back: another set of rounds from the last rejection


def review(h: Harness, task_id: str, payload: dict[str, Any]) -> tuple[Message, Reply]:
    """The reviewer's verdict. With `votes` above 1 it is critical: that many independent
    samples (each a fresh run of the reviewer on the same evidence, seeing no other
    sample), and their majority (VoteTaken, the minority kept as evidence). The samples
    after the first are asked on `<task>:vote`, so the bill shows what the vote cost."""
    first = h.ask("reviewer", task_id, payload)
    votes = h.settings.votes
    if votes == 1:
        return first
    samples = [first] + [h.ask("reviewer", f"{task_id}:vote", payload) for _ in range(votes - 1)]
    verdicts = [str((reply.report or {}).get("verdict")) for _, reply in samples]
    winner = max(("accept", "reject"), key=verdicts.count)  # odd votes: a strict majority
    minority = [
        {"sample": i, "verdict": v, "reasons": (samples[i - 1][1].report or {}).get("reasons")}
        for i, v in enumerate(verdicts, start=1)
        if v != winner
    ]
    h.emit(
        VoteTaken,
        agent="reviewer",
        task_id=task_id,
        samples=votes,
        verdicts=verdicts,
        winner=winner,
        minority=minority,
    )
    return next(s for s, v in zip(samples, verdicts, strict=True) if v == winner)
