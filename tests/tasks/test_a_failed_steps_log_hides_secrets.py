"""A step that fails logs what it failed with through redaction: the exception came from a
model client or a tool, which put in it what they had (an Authorization header echoed back, a
URL with a user name and password, an agent's words with line breaks). `log.exception` wrote
the key and the password into the worker's log as they were, and a line break in the message
started a log line the agent wrote ("ERROR run ...: forged")."""

from __future__ import annotations

import logging

import pytest

from journal_store.journal import DjangoJournal
from runtime import streams
from runtime.model import EndpointDown
from runtime.warm import WarmFlight
from services import runs, steps

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("nowhere"),  # tests/conftest.py: the test drives each step
]

KEY = "sk-live-0123456789abcdefXYZ"
FORGED = "ERROR services.steps: run r-0: all is well, nothing to see"


def message() -> str:
    return (
        f"401 from https://bob:hunter22@models.example/v1: 'Authorization: Bearer {KEY}'"
        f"\n{FORGED}\r\x1b[2K"
    )


@pytest.fixture
def failing_with(monkeypatch, settings):
    settings.MODELS = {**settings.MODELS, "MINUTES_MODEL_API_KEY": KEY}
    raised: dict[str, BaseException] = {}

    def step(self, turns, until, began=None):
        raise raised["exc"]

    monkeypatch.setattr(WarmFlight, "step", step)
    return raised


def logged_lines(caplog) -> list[str]:
    """The log as a handler writes it: each record's message, and its traceback if it has one."""
    return caplog.text.splitlines()


def assert_redacted(caplog) -> None:
    text = "\n".join(logged_lines(caplog))
    assert KEY not in text and KEY[:8] not in text
    assert "hunter22" not in text and "bob:" not in text
    assert "https://***@models.example/v1" in text and "Bearer [secret]" in text
    assert not any(line.startswith(FORGED) for line in logged_lines(caplog))
    assert f"\\n{FORGED}\\r\\x1b[2K" in text  # escaped, on the line it belongs to
    assert "\x1b" not in text


def test_a_step_that_raises_logs_its_traceback_redacted(failing_with, caplog):
    try:
        raise ValueError(f"the tool's request: {message()}")
    except ValueError as cause:
        try:
            raise RuntimeError(message()) from cause
        except RuntimeError as exc:
            failing_with["exc"] = exc
    run_id = runs.start_run("repo-fix", "first-flight")
    with caplog.at_level(logging.ERROR, logger="services.steps"):
        assert steps.drive_step(run_id, "test") == "failed-step"
    assert_redacted(caplog)
    text = "\n".join(logged_lines(caplog))
    assert "RuntimeError: 401 from" in text and "ValueError: the tool's request" in text
    assert "The above was the direct cause of:" in text
    assert "in step" in text  # the frames are kept


def test_an_endpoint_down_is_logged_redacted(failing_with, caplog):
    failing_with["exc"] = EndpointDown(message(), status=502)
    run_id = runs.start_run("repo-fix", "first-flight")
    with caplog.at_level(logging.WARNING, logger="services.steps"):
        assert steps.drive_step(run_id, "test") == "failed-step"
    assert_redacted(caplog)


def test_the_failure_journalled_for_the_run_page_hides_them_too(failing_with):
    # The StepFailed is what the run page, its dead letter and its export show.
    failing_with["exc"] = RuntimeError(message())
    run_id = runs.start_run("repo-fix", "first-flight")
    assert steps.drive_step(run_id, "test") == "failed-step"
    failed = [
        r.event
        for r in DjangoJournal().read(streams.control(run_id))
        if r.event.kind == "StepFailed"
    ]
    assert len(failed) == 1 and failed[0].error.type == "RuntimeError"
    said = failed[0].error.message
    assert KEY not in said and KEY[:8] not in said and "hunter22" not in said
    assert "https://***@models.example/v1" in said and "Bearer [secret]" in said
    assert f"\n{FORGED}" in said  # kept as it was said: the pages escape it
