"""The comparison page and API: two stored runs side by side, the first divergence, and clear
refusals for ids that name no run."""

from __future__ import annotations

import pytest
from django.test import Client

from journal_store.models import StoredEvent
from tests.dashboard.conftest import run_of
from tests.dashboard.test_escaping import Elements, hostile_run

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("recorded_runs")]


@pytest.fixture
def pair(owner):
    return run_of("first-flight"), run_of("reject-loop")


def test_the_api_compares_two_stored_runs(as_owner, pair):
    a, b = pair
    body = as_owner.get(f"/api/runs/compare?a={a}&b={b}").json()
    assert body["identical"] is False
    assert body["divergence"]["label"] == "coder's 1st model answer"
    assert body["outcome"]["a"]["status"] == "done"
    # The reject cap parks the run for a person (a dead letter) when it runs on workers.
    assert body["outcome"]["b"]["status"] == "dead-lettered"
    total = next(r for r in body["bill"] if r["agent"] == "total")
    for side, run_id in (("a", a), ("b", b)):
        bill = as_owner.get(f"/api/runs/{run_id}/bill").json()
        assert total[side]["tokens"] == bill["total"]["tokens"]
    same = as_owner.get(f"/api/runs/compare?a={a}&b={a}").json()
    assert same["identical"] is True and same["divergence"] is None


def test_the_page_shows_both_sides_of_the_divergence_with_links(as_owner, pair):
    a, b = pair
    page = as_owner.get(f"/runs/compare?a={a}&b={b}")
    assert page.status_code == 200
    html = page.content.decode()
    assert "First divergence: coder&#x27;s 1st model answer" in html
    assert "run_tests" in html and "read_file" in html
    assert f'href="/runs/{a}/?tab=timeline' in html and f'href="/runs/{b}/?tab=timeline' in html
    assert "reject_cap_reached" in html
    # The runs list's ticked rows arrive as run=…&run=…
    ticked = as_owner.get(f"/runs/compare?run={a}&run={b}").content.decode()
    assert "First divergence" in ticked


def test_the_inputs_hold_the_runs_asked_for_escaped(as_owner, pair):
    a, b = pair
    page = as_owner.get(f"/runs/compare?a={a}&b={b}").content.decode()
    assert f'name="a" value="{a}"' in page and f'name="b" value="{b}"' in page
    # The ticked rows of the runs list fill them too, and a refused id stays to be corrected.
    ticked = as_owner.get(f"/runs/compare?run={a}&run={b}").content.decode()
    assert f'name="a" value="{a}"' in ticked and f'name="b" value="{b}"' in ticked
    refused = as_owner.get(f"/runs/compare?a={a}", {"b": 'r-"><b>x'})
    assert refused.status_code == 400
    html = refused.content.decode()
    assert 'name="b" value="r-&quot;&gt;&lt;b&gt;x"' in html and "<b>x" not in html


def test_an_unknown_run_is_named_and_nothing_is_written(as_owner, pair):
    a, _ = pair
    before = StoredEvent.objects.count()
    api = as_owner.get(f"/api/runs/compare?a={a}&b=r-nope")
    assert api.status_code == 404 and "r-nope" in api.json()["detail"]
    page = as_owner.get(f"/runs/compare?a={a}&b=r-nope")
    assert page.status_code == 400
    assert "Run B: there is no run r-nope." in page.content.decode()
    long = as_owner.get(f"/runs/compare?a={'x' * 65}&b={a}")
    assert long.status_code == 400 and "Run A: a run id has at most 64" in long.content.decode()
    missing = as_owner.get("/api/runs/compare?a=" + a)
    assert missing.status_code == 422
    assert StoredEvent.objects.count() == before


def test_agent_output_on_the_page_renders_inert(as_owner, done_run):
    hostile = hostile_run()
    page = as_owner.get(f"/runs/compare?a={hostile}&b={done_run}").content.decode()
    assert "First divergence" in page
    parsed = Elements()
    parsed.feed(page)
    for tag, attrs in parsed.elements:
        assert tag != "script" or (attrs.get("src") or "").startswith("/static/")
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page  # shown as text
    assert parsed.unguarded == []  # and only inside hx-disable containers


def test_nobody_signed_out_compares(pair):
    a, b = pair
    stranger = Client()
    assert stranger.get(f"/api/runs/compare?a={a}&b={b}").status_code == 401
    page = stranger.get(f"/runs/compare?a={a}&b={b}")
    assert page.status_code == 302 and "login" in page["Location"]


def test_the_page_reads_what_comparing_the_journals_says(pair):
    """The page reads the read models and the runs' decisions only; it must agree with the
    comparison of the whole journals."""
    from journal_store.journal import DjangoJournal
    from runtime import compare as journals
    from runtime import flight
    from services import compare as stored

    a, b = pair
    page = stored.runs(a, b).as_dict()
    journal = DjangoJournal()
    whole = journals.compare(
        flight.run_records(journal, a), flight.run_records(journal, b), a, b
    ).as_dict()
    for key in ("bill", "findings", "steps", "divergence", "threads", "calls"):
        assert page[key] == whole[key], key
    # The metrics come from the stored fold, which also sees the driver's lease stream: who
    # drove a step is not an agent owning work, so both say the same.
    assert page["metrics"] == whole["metrics"]
    assert page["outcome"]["a"]["events"] == whole["outcome"]["a"]["events"]


def test_compare_with_from_a_run_page_offers_the_form_or_the_runs_counterpart(as_owner, pair):
    """The run page's "Compare with…" link names one run: the page answered 400 with "Run B:
    choose a run to compare." as if the person had got something wrong."""
    from services import baseline as baselines

    a, _ = pair
    page = as_owner.get(f"/runs/compare?a={a}")
    assert page.status_code == 200
    html = page.content.decode()
    assert f'name="a" value="{a}"' in html and "choose a run to compare" not in html
    # A run with a single-agent baseline compares with it, as a fork with its parent.
    solo = baselines.start_baseline(a, "owner").run_id
    for asked in (a, solo):
        html = as_owner.get(f"/runs/compare?a={asked}").content.decode()
        assert f'name="a" value="{a}"' in html and f'name="b" value="{solo}"' in html
    # A run that is not there is still a mistake.
    assert as_owner.get("/runs/compare?from=list&run=r-nope").status_code == 400
    # None ticked: the list's button said nothing, opening an empty form.
    none = as_owner.get("/runs/compare?from=list")
    assert none.status_code == 400
    assert "No run was ticked: tick two runs in the list to compare them" in none.text
    assert 'name="from" value="list"' in as_owner.get("/").content.decode()
    nowhere = as_owner.get("/runs/compare?a=r-nope")
    assert nowhere.status_code == 400 and "there is no run r-nope" in nowhere.content.decode()


def test_one_ticked_run_opens_the_form_with_it_as_a_and_asks_for_b(as_owner, pair):
    """A fork ticked alone opened beside its parent, but an ordinary run ticked alone was a
    400 ("Run B: choose a run to compare."): the form with it as A asks for B instead."""
    from journal_store import projection
    from services import forks
    from tests.dashboard.conftest import drive
    from tests.dashboard.test_metrics_fork_without_its_parent import first_verdict

    a, other = pair
    for asked in (f"from=list&run={other}", f"run={other}"):
        page = as_owner.get(f"/runs/compare?{asked}")
        assert page.status_code == 200, page.content.decode()
        html = page.content.decode()
        assert f'name="a" value="{other}"' in html and 'name="b" value=""' in html
        assert f"One run was ticked, {other}: it is run A. Choose run B" in html
        assert "message error" not in html
    # A ticked fork still opens beside its parent.
    child = forks.fork_run(a, first_verdict(a), forks.Changes(), "owner")
    assert drive(child) != "stepped"
    projection.catch_up()
    html = as_owner.get(f"/runs/compare?from=list&run={child}").content.decode()
    assert f'name="a" value="{a}"' in html and f'name="b" value="{child}"' in html
    assert "One run was ticked" not in html and 'id="divergence"' in html


def test_a_run_beside_itself_is_said_to_be_the_same_run(as_owner, pair):
    """It read "No divergence: the runs took the same steps alike", as if two runs had."""
    a, b = pair
    same = as_owner.get(f"/api/runs/compare?a={a}&b={a}").json()
    assert same["same_run"] is True and same["identical"] is True
    assert as_owner.get(f"/api/runs/compare?a={a}&b={b}").json()["same_run"] is False
    page = as_owner.get(f"/runs/compare?a={a}&b={a}")
    assert page.status_code == 200
    html = page.content.decode()
    assert f"A and B are the same run, {a}" in html and "The runs took the same" not in html
    assert "A and B are the same run" not in as_owner.get(f"/runs/compare?a={a}&b={b}").text


def test_a_run_too_long_to_compare_is_a_409_as_a_replay_too_long_is(as_owner, pair, monkeypatch):
    """It was a 413, which says the request's body was too large (this one has none)."""
    from services import compare

    monkeypatch.setattr(compare, "EVENTS_MAX", 3)
    a, b = pair
    answer = as_owner.get(f"/api/runs/compare?a={a}&b={b}")
    assert answer.status_code == 409
    assert answer.json()["detail"].startswith(f"run {a} has ")
    assert "compare runs of up to 3 here" in answer.json()["detail"]
    page = as_owner.get(f"/runs/compare?a={a}&b={b}")
    assert page.status_code == 409 and "compare runs of up to 3 here" in page.content.decode()
    schema = as_owner.get("/api/openapi.json").json()
    answers = schema["paths"]["/api/runs/compare"]["get"]["responses"]
    assert "409" in answers and "413" not in answers


def test_an_id_that_is_no_run_id_is_a_422_naming_its_side(as_owner, pair):
    a, _ = pair
    # A 10 KB id was looked up and quoted whole in a 404 ("no run xxxx…", every character).
    answer = as_owner.get(f"/api/runs/compare?a={a}&b={'x' * 10_000}")
    assert answer.status_code == 422 and len(answer.content) < 1_000
    [problem] = answer.json()["detail"]
    assert problem["loc"] == ["query", "b"] and "is not a run id" in problem["msg"]
    both = as_owner.get("/api/runs/compare?a=r%3Cb%3E&b=..%2Fetc")
    assert {tuple(p["loc"]) for p in both.json()["detail"]} == {("query", "a"), ("query", "b")}


def test_a_fork_whose_parent_is_not_here_opens_on_the_form_not_a_refusal(as_owner):
    """A fork imported on its own: "Compare with…" paired it with its parent, which this store
    does not hold, and answered 400 "Run A: there is no run …", a run the person never named."""
    import io

    from journal_store import projection
    from journal_store.journal import DjangoJournal
    from journal_store.models import RunSummary
    from journal_store.transfer import import_journal
    from services import forks
    from tests.dashboard.conftest import drive
    from tests.dashboard.test_metrics_fork_without_its_parent import exported, first_verdict

    parent = run_of("first-flight")
    child = forks.fork_run(parent, first_verdict(parent), forks.Changes(), "owner")
    assert drive(child) != "stepped"
    projection.catch_up()
    journal = exported(child)
    StoredEvent.objects.all().delete()
    projection.rebuild()
    import_journal(io.BytesIO(journal))
    projection.catch_up()
    assert RunSummary.objects.get(run_id=child).parent_id == parent
    assert DjangoJournal().version(f"run-{parent}") == 0
    page = as_owner.get(f"/runs/compare?a={child}")
    assert page.status_code == 200, page.content.decode()
    html = page.content.decode()
    assert f'name="a" value="{child}"' in html and "there is no run" not in html


def test_the_calls_table_says_answers_where_the_bill_counts_a_paid_failure_as_a_call(as_owner):
    """Two columns headed "A calls" on one page: the bill's 2 (a reply that could not be used
    was paid for, ModelFailed v2) beside the latency table's 1 (answers alone)."""
    import io
    import json

    from journal_store import projection
    from journal_store.transfer import import_journal

    def journal(run_id: str, failed: bool) -> str:
        r = {"run_id": run_id, "agent": "coder", "task_id": "T1"}
        start = {"team": "solo", "scenario": "s", "task": "t"}
        lines = [{"kind": "TeamStarted", "run_id": run_id, **start}]
        usage = {"total": 30, "prompt": 20, "completion": 10}
        if failed:
            error = {"type": "ReplyUnusable", "message": "cut off"}
            lines.append({"kind": "ModelFailed", "v": 3, **r, "error": error, "usage": usage})
        lines.append(
            {"kind": "ModelResponded", "v": 3, **r, "text": "x", "tool_calls": [], "usage": usage}
        )
        body = "".join(json.dumps(line) + "\n" for line in lines).encode()
        import_journal(io.BytesIO(body))
        return run_id

    a, b = journal("r-paid-failure", True), journal("r-answered", False)
    projection.catch_up()
    body = as_owner.get(f"/api/runs/compare?a={a}&b={b}").json()
    coder = next(r for r in body["bill"] if r["agent"] == "coder")
    assert (coder["a"]["calls"], coder["b"]["calls"]) == (2, 1)
    page = as_owner.get(f"/runs/compare?a={a}&b={b}").content.decode()
    latency = page.split("<h2>Model answers and latency</h2>")[1].split("</table>")[0]
    assert ">A answers</th>" in latency and ">A calls</th>" not in latency
    assert "a failed call that was paid for" in page
