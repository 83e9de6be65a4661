"""The timeline says in one line what each coordination decision was: which sub-task was
degraded and why, who let a deadline pass, and which breaker tripped."""

from __future__ import annotations

from dashboard.present import summary


def test_a_degraded_subtask_names_its_worker_why_and_fallback():
    line = summary(
        "SubtaskDegraded",
        {
            "worker_id": "policy-worker",
            "objective": "Say whether the refund is within policy.",
            "why": "policy-worker on S3 has no verified finding",
            "fallback": "policy snapshot 2025-05",
        },
    )
    assert line == (
        "DEGRADED policy-worker: policy-worker on S3 has no verified finding "
        "(answered from policy snapshot 2025-05)"
    )


def test_an_overdue_reply_and_a_passed_deadline_name_who_and_why():
    overdue = {"awaited": "reviewer", "request": "m-004", "reason": "reviewer took 4 turns"}
    assert summary("ReplyOverdue", overdue) == "OVERDUE reviewer on m-004: reviewer took 4 turns"
    passed = {"awaited": "reviewer", "attempt": 2, "reason": "gave no report (overdue)"}
    assert summary("DeadlinePassed", passed) == (
        "deadline passed: reviewer, attempt 2: gave no report (overdue)"
    )


def test_each_breaker_says_which_it_is_and_what_tripped_it():
    spend = {"breaker": "spend:r-1", "reason": "spend rate", "rates": {"tokens_per_second": 160.5}}
    assert summary("BreakerTripped", spend) == (
        "TRIPPED spend breaker spend:r-1: spend rate (tokens_per_second 160.5)"
    )
    tools = {"breaker": "tools:policy", "reason": "failure rate", "rates": {}}
    assert (
        summary("BreakerTripped", tools)
        == "TRIPPED tool-failure breaker tools:policy: failure rate"
    )
    loop = {
        "breaker": "loop:kb-worker",
        "reason": "kb.search called 3 times",
        "rates": {"repeats": 3.0},
    }
    assert summary("BreakerTripped", loop) == (
        "TRIPPED loop breaker loop:kb-worker: kb.search called 3 times (repeats 3)"
    )


def test_a_scheduled_retry_says_which_attempt_and_how_long_it_waits():
    retry = {"tool": "run_tests", "call_id": "c1", "attempt": 2, "delay": 0.137}
    assert summary("ToolRetryScheduled", retry) == "run_tests: attempt 2 after a 0.137 s backoff"
