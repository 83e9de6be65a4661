"""A fork's request (POST /api/runs/RUN/fork) names every fault in one 422, its checks that
need the run among them: an `at` no event of the run is at (or one no fork starts after), an
agent the run has not, a tool result replaced where the event is no tool's, an endpoint this
server cannot use. Those were said once the body's schema faults were mended (`{"at": 999999,
"max_turns": 0}` took two rounds), once `at` was mended, or, beside an Idempotency-Key that
cannot be one, not at all (the key was said alone).

Nothing is written in any of them; a run that is not here is still a 404 once the body is
sound, and says nothing of itself beside its faults; someone who may not fork (a read-only
token, nobody signed in) is refused before anything of the body or the run is judged."""

from __future__ import annotations

import pytest
from django.test import Client

from dashboard import asked, queries
from dashboard.models import ApiToken
from journal_store.journal import DjangoJournal
from runtime import fork, fork_checks, keys
from services import forks, runs
from tests.dashboard.conftest import run_of
from tests.dashboard.test_a_new_runs_every_fault_is_said_in_one_round import (
    LONG_KEY,
    REFUSED_URL,
    SPACED_KEY,
    USABLE,
    body,
    endpoint_at,
    key,
    listed,
    post,
    shown,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]

CONTROL_KEY = "nightly\x01run"
NOWHERE = 999_999  # no event of the run is there
NOBODY = {"agent": "nobody", "text": "Keep it small."}


@pytest.fixture
def parent(owner) -> str:
    return run_of("premature-done")


def position(run_id: str, kind: str) -> int:
    return next(r.position for r in DjangoJournal().read(f"run-{run_id}") if r.event.kind == kind)


def no_agent(run_id: str) -> str:
    agents = fork.cast(queries.event_agents(run_id), "repo-fix")
    return f"the run has no agent 'nobody' (it has {fork_checks.known(agents)})"


def nested(levels: int) -> list:
    """An array `levels` deep."""
    value: list = []
    for _ in range(levels - 1):
        value = [value]
    return value


def schemas(name: str, kind: str) -> tuple[tuple[str, str], str]:
    """The schema's own entry: its loc and type alone (its msg and ctx pydantic's)."""
    return ("body", name), kind


# Where to fork, by mark: the run's start (no tool's result) and its verdict (no fork point).
MARKS = {"@started": "TeamStarted", "@verdict": "TeamFinished"}

# (what is sent, the endpoint's URL, the key sent, the entries expected (given the run), in
# their order: the schema's, the run's checks by field, the header's)
FORKS = {
    "an `at` no event is at beside a bound of 0": (
        {"at": NOWHERE, "max_turns": 0},
        USABLE,
        None,
        lambda run: [
            schemas("max_turns", "greater_than_equal"),
            body("at", asked.no_event_at(run, str(NOWHERE))),
        ],
    ),
    "an agent the run has not beside an allowance of 0": (
        {"at": "@started", "models": {"nobody": "scripted"}, "allowance": 0},
        USABLE,
        None,
        lambda run: [schemas("allowance", "greater_than_equal"), body("models", no_agent(run))],
    ),
    "an endpoint the settings refuse beside a bound of 0": (
        {"at": "@started", "models": {"coder": "endpoint"}, "max_turns": 0},
        REFUSED_URL,
        None,
        lambda run: [
            schemas("max_turns", "greater_than_equal"),
            body("models", runs.endpoint_unusable()),
        ],
    ),
    "a tool result replaced at no tool's result beside a bound of 0": (
        {"at": "@started", "tool_result": {"x": 1}, "max_turns": 0},
        USABLE,
        None,
        lambda run: [
            schemas("max_turns", "greater_than_equal"),
            body(
                "tool_result",
                f"{started(run)} is a TeamStarted; fork at a ToolReturned to replace its result",
            ),
        ],
    ),
    "a tool result too deep to keep beside an `at` no event is at": (
        {"at": NOWHERE, "tool_result": nested(fork_checks.RESULT_DEPTH + 1)},
        USABLE,
        None,
        lambda run: [
            body("at", asked.no_event_at(run, str(NOWHERE))),
            body(
                "tool_result",
                f"nested deeper than {fork_checks.RESULT_DEPTH} levels of arrays and objects",
            ),
        ],
    ),
    "the run's verdict beside a bound of 0": (
        {"at": "@verdict", "max_turns": 0},
        USABLE,
        None,
        lambda run: [schemas("max_turns", "greater_than_equal"), body("at", verdict(run))],
    ),
    "a message for nobody beside a position that is none": (
        {"at": -1, "message": NOBODY},
        USABLE,
        None,
        lambda run: [schemas("at", "position"), body("message", no_agent(run))],
    ),
    "a message for nobody beside an `at` no event is at, the body sound to the schema": (
        {"at": NOWHERE, "message": NOBODY},
        USABLE,
        None,
        lambda run: [
            body("at", asked.no_event_at(run, str(NOWHERE))),
            body("message", no_agent(run)),
        ],
    ),
    "an endpoint the settings refuse beside an `at` no event is at": (
        {"at": NOWHERE, "models": {"coder": "endpoint"}},
        REFUSED_URL,
        None,
        lambda run: [
            body("at", asked.no_event_at(run, str(NOWHERE))),
            body("models", runs.endpoint_unusable()),
        ],
    ),
    "a key too long beside an `at` no event is at": (
        {"at": NOWHERE},
        USABLE,
        LONG_KEY,
        lambda run: [body("at", asked.no_event_at(run, str(NOWHERE))), key(keys.refusal(LONG_KEY))],
    ),
    "a key with a control character beside an `at` no event is at": (
        {"at": NOWHERE},
        USABLE,
        CONTROL_KEY,
        lambda run: [
            body("at", asked.no_event_at(run, str(NOWHERE))),
            key(keys.refusal(CONTROL_KEY)),
        ],
    ),
    "a key with a space beside an agent the run has not": (
        {"at": "@started", "models": {"nobody": "scripted"}},
        USABLE,
        SPACED_KEY,
        lambda run: [body("models", no_agent(run)), key(keys.refusal(SPACED_KEY))],
    ),
    "everything at once": (
        {"at": NOWHERE, "models": {"coder": "endpoint"}, "message": NOBODY, "max_turns": 0},
        REFUSED_URL,
        LONG_KEY,
        lambda run: [
            schemas("max_turns", "greater_than_equal"),
            body("at", asked.no_event_at(run, str(NOWHERE))),
            body("models", runs.endpoint_unusable()),
            body("message", no_agent(run)),
            key(keys.refusal(LONG_KEY)),
        ],
    ),
}


def started(run_id: str) -> str:
    found = forks.event_at(run_id, position(run_id, "TeamStarted"))
    assert found is not None
    return fork_checks.cited(found, run_id)


def verdict(run_id: str) -> str:
    found = forks.event_at(run_id, position(run_id, "TeamFinished"))
    assert found is not None
    why = fork.unforkable(found, run_id, forks.first_letter(run_id))
    assert why is not None
    return why


def at_marked(sent: dict, run_id: str) -> dict:
    at = sent["at"]
    return {**sent, "at": position(run_id, MARKS[at]) if at in MARKS else at}


@pytest.mark.parametrize("case", FORKS.values(), ids=FORKS.keys())
def test_a_fork_is_refused_for_every_fault_in_one_422(api, settings, parent, case):
    sent, url, sent_key, expected = case
    endpoint_at(settings, url)
    said = post(api, f"/api/runs/{parent}/fork", at_marked(sent, parent), sent_key)
    assert shown(said) == expected(parent)


# --- what stays as it was ------------------------------------------------------------------------


def test_a_run_that_is_not_here_is_still_a_404_and_says_nothing_beside_its_faults(api):
    before = DjangoJournal().last_position()
    sent = {"at": NOWHERE, "message": NOBODY}
    answer = api.post("/api/runs/r-000000000000/fork", sent, content_type="application/json")
    assert answer.status_code == 404, answer.content
    # With a schema fault, or a key refused: those alone, nothing of a run.
    said = post(api, "/api/runs/r-000000000000/fork", {**sent, "max_turns": 0}, None)
    assert shown(said) == [schemas("max_turns", "greater_than_equal")]
    said = post(api, "/api/runs/r-000000000000/fork", sent, SPACED_KEY)
    assert shown(said) == [key(keys.refusal(SPACED_KEY))]
    assert DjangoJournal().last_position() == before


@pytest.mark.parametrize("sent_key", [None, LONG_KEY])
def test_whoever_may_not_fork_learns_nothing_of_the_run(reviewer, parent, sent_key):
    """A read-only token is refused before the body is read, as signed out is: nothing of
    the run (its agents, its positions) is said to either."""
    read_only = Client(
        HTTP_AUTHORIZATION=f"Bearer {ApiToken.issue(reviewer, 'ro', read_only=True)[1]}"
    )
    sent = {"at": NOWHERE, "message": NOBODY, "max_turns": 0}
    headers = {"Idempotency-Key": sent_key} if sent_key else {}
    before = DjangoJournal().last_position()
    for client, status in ((read_only, 403), (Client(), 401)):
        answer = client.post(
            f"/api/runs/{parent}/fork", sent, content_type="application/json", headers=headers
        )
        assert answer.status_code == status, answer.content
        assert set(answer.json()) == {"detail"} and parent not in answer.json()["detail"]
        assert "nobody" not in answer.json()["detail"]
    assert DjangoJournal().last_position() == before


UNREADABLE = {
    "not JSON": (b'{"at": 999999,}', 400, "the body is not JSON: "),
    "nested too deeply": (b"[" * 100_000 + b"]" * 100_000, 400, "the body is nested too deeply"),
    "too large": (b'{"at": 1, "tool_result": "' + b"t" * 3_000_000 + b'"}', 413, "the request"),
}


@pytest.mark.parametrize("case", UNREADABLE.values(), ids=UNREADABLE.keys())
def test_a_fork_body_that_cannot_be_read_is_still_refused_at_once(api, parent, case):
    sent, status, detail = case
    before = (DjangoJournal().last_position(), listed(api))
    headers = {"Idempotency-Key": SPACED_KEY}
    answer = api.post(
        f"/api/runs/{parent}/fork", sent, content_type="application/json", headers=headers
    )
    assert answer.status_code == status, answer.content
    assert answer.json()["detail"].startswith(detail)
    assert (DjangoJournal().last_position(), listed(api)) == before


def test_alone_a_check_of_the_changes_is_still_the_services_400(api, settings, parent):
    """The body sound and `at` an event: the fork's own checks are begin_fork's, as before,
    after a keyed fork sent again is answered."""
    endpoint_at(settings, REFUSED_URL)
    sent = {"at": position(parent, "TeamStarted"), "models": {"coder": "endpoint"}}
    before = DjangoJournal().last_position()
    answer = api.post(f"/api/runs/{parent}/fork", sent, content_type="application/json")
    assert answer.status_code == 400, answer.content
    assert answer.json()["detail"] == f"models: {runs.endpoint_unusable()}"
    assert DjangoJournal().last_position() == before
