"""POST /api/runs (and a fork's POST) names every fault of the request in one 422, the three
that took a second round with the rest: a NUL (or half a UTF-16 pair) in the task, which the
body's NUL guard refused alone, hiding the task's other refusals (the scripted backend's);
a model endpoint this server cannot use, said only once the schema's faults were mended; and
an Idempotency-Key the server refuses, said alone before the body was judged. And a
`scenario` holding a NUL (or half a pair), refused with "no scenario of the team" and the
request's other faults in the API's words, where the body's NUL guard said it alone. Each
entry at its place (["body", <field>], ["header", "Idempotency-Key"]); nothing is written or
started; a body that cannot be read at all is still refused at once, as before. A fork's
request: test_a_forks_every_fault_is_said_in_one_round.py."""

from __future__ import annotations

import pytest
from django.test import Client

from dashboard import actions, asked
from journal_store.journal import DjangoJournal
from runtime import keys, written
from services import runs
from teams import TEAMS

pytestmark = pytest.mark.django_db

USABLE = "http://127.0.0.1:9/v1"  # a URL the settings take: nothing is asked of it
REFUSED_URL = "ftp://models.example"
LONG_KEY = "k" * 300
SPACED_KEY = "nightly run"
NUL_TASK = "fix\x00 it"
HALF_TASK = "fix\ud800 it"


def ours(where: str, name: str, why: str) -> dict[str, object]:
    """An entry as api.errors.invalid writes one."""
    return {"type": "value_error", "loc": [where, name], "msg": why}


def body(name: str, why: str) -> dict[str, object]:
    return ours("body", name, why)


def key(why: str) -> dict[str, object]:
    return ours("header", "Idempotency-Key", why)


def schemas(name: str) -> tuple[str, str]:
    """The schema's own entry (pydantic's, with its ctx): its loc and type alone."""
    return ("body", name), {
        "allowance": "greater_than_equal",
        "max_turns": "int_type",
        "votes": "literal_error",
        "model": "literal_error",
        "team": "team",
    }[name]


def endpoint_at(settings, url: str) -> None:
    settings.MODEL_BASE_URL = url
    settings.MODELS = {"MINUTES_MODEL_BASE_URL": url, "MINUTES_MODEL": "some-model"} if url else {}


def post(api: Client, path: str, sent: dict, sent_key: str | None) -> list[dict]:
    """The 422's entries; the journal and the run list as they were."""
    before = (DjangoJournal().last_position(), listed(api))
    headers = {"Idempotency-Key": sent_key} if sent_key is not None else {}
    answer = api.post(path, sent, content_type="application/json", headers=headers)
    assert answer.status_code == 422, answer.content
    assert (DjangoJournal().last_position(), listed(api)) == before  # nothing written
    return answer.json()["detail"]


def listed(api: Client) -> list[str]:
    return [run["run_id"] for run in api.get("/api/runs").json()["items"]]


def shown(entries: list[dict]) -> list[object]:
    """Our entries whole; the schema's as (loc, type), its msg and ctx pydantic's."""
    return [e if e.get("type") == "value_error" else (tuple(e["loc"]), e["type"]) for e in entries]


NO_ENDPOINT = runs.NO_ENDPOINT


# (what is sent, the endpoint's URL, the key sent, the entries expected, in their order)
CASES = {
    "a NUL in the task beside the scripted backend's refusal": (
        {"task": NUL_TASK},
        USABLE,
        None,
        lambda: [
            body("task", actions.SCRIPTED_TASK),
            body("task", actions.task_refusal(NUL_TASK)),
        ],
    ),
    "a NUL in the task beside a schema fault": (
        {"task": NUL_TASK, "allowance": 0},
        USABLE,
        None,
        lambda: [
            schemas("allowance"),
            body("task", actions.SCRIPTED_TASK),
            body("task", actions.task_refusal(NUL_TASK)),
        ],
    ),
    "a NUL in a model's task beside a schema fault": (
        {"task": NUL_TASK, "model": "endpoint", "votes": 2},
        USABLE,
        None,
        lambda: [schemas("votes"), body("task", actions.task_refusal(NUL_TASK))],
    ),
    "half a pair in the task beside a model that is none": (
        {"task": HALF_TASK, "model": "gpt"},
        USABLE,
        None,
        lambda: [schemas("model"), body("task", actions.task_refusal(HALF_TASK))],
    ),
    "an endpoint the settings refuse beside a schema fault": (
        {"model": "endpoint", "allowance": 0},
        REFUSED_URL,
        None,
        lambda: [schemas("allowance"), body("model", runs.endpoint_unusable())],
    ),
    "no endpoint beside a schema fault": (
        {"model": "endpoint", "max_turns": "10"},
        "",
        None,
        lambda: [schemas("max_turns"), body("model", NO_ENDPOINT)],
    ),
    "a key too long beside a schema fault": (
        {"allowance": 0},
        USABLE,
        LONG_KEY,
        lambda: [schemas("allowance"), key(keys.refusal(LONG_KEY))],
    ),
    "a key with a space beside the task's refusal, the body sound to the schema": (
        {"task": "fix it"},
        USABLE,
        SPACED_KEY,
        lambda: [body("task", actions.SCRIPTED_TASK), key(keys.refusal(SPACED_KEY))],
    ),
    "a key beside an endpoint the settings refuse, the body sound to the schema": (
        {"model": "endpoint"},
        REFUSED_URL,
        SPACED_KEY,
        lambda: [body("model", runs.endpoint_unusable()), key(keys.refusal(SPACED_KEY))],
    ),
    "all three beside a schema fault": (
        {"model": "endpoint", "task": NUL_TASK, "allowance": 0},
        REFUSED_URL,
        LONG_KEY,
        lambda: [
            schemas("allowance"),
            body("task", actions.task_refusal(NUL_TASK)),
            body("model", runs.endpoint_unusable()),
            key(keys.refusal(LONG_KEY)),
        ],
    ),
}


NUL_SCENARIO = "first\x00flight"
HALF_SCENARIO = "first\ud800flight"


def no_scenario(name: str) -> str:
    """The refusal of a scenario repo-fix has not, naming it."""
    known = ", ".join(sorted(TEAMS["repo-fix"].scenarios))
    return f"{asked.shown(name)} is no scenario of repo-fix: {known}"


SCENARIOS = {
    "a NUL in the scenario, which is none of the team's": (
        {"scenario": NUL_SCENARIO},
        USABLE,
        None,
        lambda: [
            body("scenario", no_scenario(NUL_SCENARIO)),
            body("scenario", written.unwritten_reason(NUL_SCENARIO, "scenario")),
        ],
    ),
    "a NUL in the scenario beside a schema fault and an endpoint the settings refuse": (
        {"scenario": NUL_SCENARIO, "allowance": 0, "model": "endpoint"},
        REFUSED_URL,
        None,
        lambda: [
            schemas("allowance"),
            body("scenario", no_scenario(NUL_SCENARIO)),
            body("scenario", written.unwritten_reason(NUL_SCENARIO, "scenario")),
            body("model", runs.endpoint_unusable()),
        ],
    ),
    "half a pair in the scenario of a team that is none": (
        {"team": "nope", "scenario": HALF_SCENARIO},
        USABLE,
        None,
        lambda: [
            schemas("team"),
            body("scenario", written.unwritten_reason(HALF_SCENARIO, "scenario")),
        ],
    ),
    "a NUL in the scenario beside the task's refusal and a key with a space": (
        {"scenario": NUL_SCENARIO, "task": "fix it"},
        USABLE,
        SPACED_KEY,
        lambda: [
            body("scenario", no_scenario(NUL_SCENARIO)),
            body("scenario", written.unwritten_reason(NUL_SCENARIO, "scenario")),
            body("task", actions.SCRIPTED_TASK),
            key(keys.refusal(SPACED_KEY)),
        ],
    ),
}


def test_the_scenario_refusal_names_no_scenario_and_the_nul():
    said = actions.NewRun(team="repo-fix", scenario=NUL_SCENARIO).scenario_refusals()
    assert said[0].startswith("'first\\x00flight' is no scenario of repo-fix: ")
    assert said[1] == "the scenario holds a NUL character (U+0000) at character 6, which no " + (
        "text here may hold"
    )


@pytest.mark.parametrize("case", [*CASES.values(), *SCENARIOS.values()], ids=[*CASES, *SCENARIOS])
def test_a_new_run_is_refused_for_every_fault_in_one_422(api, settings, case):
    sent, url, sent_key, expected = case
    endpoint_at(settings, url)
    assert shown(post(api, "/api/runs", sent, sent_key)) == expected()


@pytest.fixture
def a_run(api) -> str:
    started = api.post("/api/runs", {"team": "repo-fix"}, content_type="application/json")
    assert started.status_code == 201, started.content
    return started.json()["run_id"]


FORKS = {
    "a key too long beside a position that is none": (
        {"at": -1},
        LONG_KEY,
        [(("body", "at"), "position"), key(keys.refusal(LONG_KEY))],
    ),
    "a key with a space beside a NUL in the message and a bound of 0": (
        {"at": "@first", "message": {"agent": "coder", "text": "go\x00"}, "max_turns": 0},
        SPACED_KEY,
        [
            (("body", "message"), "value_error"),
            (("body", "max_turns"), "greater_than_equal"),
            key(keys.refusal(SPACED_KEY)),
        ],
    ),
}


@pytest.mark.parametrize("case", FORKS.values(), ids=FORKS.keys())
def test_a_fork_is_refused_for_its_key_with_its_bodys_faults(api, a_run, case):
    sent, sent_key, expected = case
    # The run's first event (its TeamStarted): an `at` no event of the run is at is refused in
    # the same 422 (test_a_forks_every_fault_is_said_in_one_round.py), and position 1 is the
    # run's only where no test wrote before it.
    if sent["at"] == "@first":
        sent = {**sent, "at": DjangoJournal().read(f"run-{a_run}")[0].position}
    said = post(api, f"/api/runs/{a_run}/fork", sent, sent_key)
    # The schema's NUL refusal is a value_error of pydantic's own: shown by its loc alone.
    assert [e if e["loc"][0] == "header" else (tuple(e["loc"]), e["type"]) for e in said] == (
        expected
    )


UNREADABLE = {
    "not JSON": (b'{"allowance": 0,}', 400, "the body is not JSON: "),
    "nested too deeply": (b"[" * 100_000 + b"]" * 100_000, 400, "the body is nested too deeply"),
    "too large": (b'{"task": "' + b"t" * 3_000_000 + b'"}', 413, "the request body is more than"),
    # Python kept the last, where a proxy or a log that read the body may have kept the first.
    "a key twice": (
        b'{"team": "solo", "allowance": 100, "team": "repo-fix"}',
        400,
        "the body names 'team' twice in one object: give each key once",
    ),
    "a key twice, nested": (
        b'{"team": "repo-fix", "models": {"coder": "scripted", "coder": "endpoint"}}',
        400,
        "the body names 'coder' twice in one object",
    ),
}


@pytest.mark.parametrize("case", UNREADABLE.values(), ids=UNREADABLE.keys())
def test_a_body_that_cannot_be_read_is_still_refused_at_once_whatever_its_key(api, case):
    """Not a 422 naming the key: the body's own 400 or 413, as before."""
    sent, status, detail = case
    before = DjangoJournal().last_position()
    headers = {"Idempotency-Key": SPACED_KEY}
    answer = api.post("/api/runs", sent, content_type="application/json", headers=headers)
    assert answer.status_code == status, answer.content
    assert answer.json()["detail"].startswith(detail)
    assert DjangoJournal().last_position() == before and listed(api) == []


def test_a_sound_body_with_a_sound_key_still_starts_its_run(api, settings):
    endpoint_at(settings, USABLE)
    sent = {"team": "repo-fix"}
    headers = {"Idempotency-Key": "nightly-1"}
    answer = api.post("/api/runs", sent, content_type="application/json", headers=headers)
    assert answer.status_code == 201, answer.content
    assert listed(api) == [answer.json()["run_id"]]
