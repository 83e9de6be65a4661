"""Hostile files are bounded: nesting, line count, problems kept and reported, the upload's size
before its body is read, and the memory an import holds; a duplicate id or a nesting that
breaks the JSON reader is a problem naming its line, never a server error."""

from __future__ import annotations

import io
import json
import tracemalloc

import pytest
from django.test import Client

from journal_store.journal import DjangoJournal
from journal_store.transfer import ImportRefused, import_journal
from tests.security.import_helpers import (
    VICTIM,
    a_victim,
    an_importer,
    import_via,
    jsonl,
    line,
    refused,
    snapshot,
    team_started,
)

pytestmark = pytest.mark.django_db


def test_nesting_too_deep_for_the_json_reader_is_a_problem_not_a_500(tmp_path):
    importer = an_importer()
    before = snapshot()
    data = jsonl(team_started("r-deep"), "[" * 100_000 + "]" * 100_000)
    answer = import_via("api", importer, data, tmp_path)
    assert answer.status == 400
    assert "line 2: nested too deeply for JSON to read" in answer.text
    assert snapshot() == before


def test_a_number_too_long_for_python_to_read_is_a_problem_not_a_500(tmp_path):
    importer = an_importer()
    before = snapshot()
    huge = '{"kind": "BudgetDebited", "amount": ' + "7" * 5000 + "}"
    data = jsonl(team_started("r-long"), huge)
    for via in ("api", "page", "command"):
        answer = import_via(via, importer, data, tmp_path)
        assert answer.status == refused(via), via
        assert "line 2: not JSON we can read: a whole number longer than 4,300 digits" in (
            answer.text
        )
    assert snapshot() == before


def test_a_key_given_twice_is_a_problem_naming_its_line(tmp_path):
    """JSON leaves a key given twice to its reader: Python kept the last, so a line whose
    `run_id` another tool read as the first ("r-shown") was imported as another's run."""
    importer = an_importer()
    before = snapshot()
    shown = json.dumps(team_started("r-shown"))
    twice = shown[:-1] + ', "run_id": "r-taken"}'
    nested = json.dumps(team_started("r-nested"))
    nested = nested.replace('"config": {', '"config": {"team": "solo", ')  # its config's
    data = jsonl(twice, nested)
    for via in ("api", "page", "command"):
        answer = import_via(via, importer, data, tmp_path)
        assert answer.status == refused(via), via
        assert "line 1: the key 'run_id' is given twice in one object" in answer.text, via
        assert "line 2: the key 'team' is given twice in one object" in answer.text, via
    assert snapshot() == before


@pytest.mark.parametrize("url", ["/api/journals", "/import"])
def test_two_files_sent_as_the_journal_are_refused_and_neither_is_imported(url):
    """The import read the last file alone and said it was done: the first was never read."""
    client = Client()
    client.force_login(an_importer())
    before = snapshot()
    files = []
    for run_id in ("r-first", "r-second"):
        upload = io.BytesIO(jsonl(team_started(run_id)))
        upload.name = f"{run_id}.jsonl"
        files.append(upload)
    answer = client.post(url, {"journal": files})
    assert answer.status_code == 400
    said = "2 files were sent as the journal: an import takes one file a request"
    assert said in answer.content.decode()
    assert snapshot() == before


def test_nesting_past_the_limit_is_refused_inside_a_good_event(tmp_path):
    importer = an_importer()
    deep: object = "bottom"
    for _ in range(100):
        deep = {"k": deep}
    before = snapshot()
    answer = import_via("api", importer, jsonl(team_started("r-deep", extra=deep)), tmp_path)
    assert answer.status == 400
    assert "line 1: nested deeper than the limit of 64 levels" in answer.text
    assert snapshot() == before


def test_an_event_id_twice_in_the_file_names_the_earlier_line_in_another_stream(tmp_path):
    importer = an_importer()
    first = line("BudgetDebited", "r-dup", amount=1)
    again = {
        **line("DriverLeased", "r-dup", holder="w", expires=1.0, at_version=0),
        "id": first["id"],
        "stream": "control-r-dup",
    }
    before = snapshot()
    answer = import_via("api", importer, jsonl(team_started("r-dup"), first, again), tmp_path)
    assert answer.status == 400
    assert (
        "line 3: field 'id': repeats the event id of line 2 (stream 'run-r-dup', version 2)"
        in answer.text
    )
    assert snapshot() == before


def test_an_event_id_twice_in_one_stream_names_both_lines(tmp_path):
    importer = an_importer()
    first = line("BudgetDebited", "r-dup", amount=1)
    before = snapshot()
    answer = import_via("api", importer, jsonl(team_started("r-dup"), first, first), tmp_path)
    assert answer.status == 400
    assert "line 3: field 'id': repeats the event id of line 2" in answer.text
    assert snapshot() == before


def test_an_event_id_already_stored_is_a_problem_naming_the_line(tmp_path):
    importer = an_importer()
    a_victim()
    stored = DjangoJournal().read(f"run-{VICTIM}")[0].event.id
    copy = {**line("BudgetDebited", "r-copy", amount=1), "id": stored}
    before = snapshot()
    answer = import_via("api", importer, jsonl(team_started("r-copy"), copy), tmp_path)
    assert answer.status == 400
    assert f"line 2: field 'id': event id {stored} is already stored" in answer.text
    assert snapshot() == before


def test_a_file_over_the_line_limit_is_refused(tmp_path, settings):
    importer = an_importer()
    settings.IMPORT_MAX_LINES = 10
    rows = [team_started("r-long")] + [line("BudgetDebited", "r-long", amount=1)] * 10
    rows = [{**r, "id": f"{i:032x}"} for i, r in enumerate(rows, 1)]
    before = snapshot()
    answer = import_via("api", importer, jsonl(*rows), tmp_path)
    assert answer.status == 400
    assert "line 11: the file is over the limit of 10 lines" in answer.text
    assert snapshot() == before


def test_the_answer_lists_twenty_short_problems_and_counts_the_rest(tmp_path):
    importer = an_importer()
    data = b"".join(b'{"kind": "' + b"K" * 20_000 + b'"}\n' for _ in range(1_000))
    before = snapshot()
    client = Client()
    client.force_login(importer)
    upload = io.BytesIO(data)
    upload.name = "noise.jsonl"
    response = client.post("/api/journals", {"journal": upload})
    assert response.status_code == 400
    body = response.json()
    assert len(body["problems"]) == 20 and body["more"] == 980
    assert body["problems"][0].startswith("line 1: unknown kind 'KKK")
    assert len(response.content) < 20 * 400  # each problem is cut short, not 20 KB long
    assert snapshot() == before


def test_two_megabytes_of_junk_lines_take_bounded_memory():
    """A million bad lines: a million problems would take well over 50 MB to hold."""
    data = b"x\n" * (1024 * 1024)
    before = snapshot()
    tracemalloc.start()
    try:
        with pytest.raises(ImportRefused) as info:
            import_journal(io.BytesIO(data), name="junk.jsonl", size=len(data))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.problems[0] == "line 1: not JSON: Expecting value at column 1"
    assert len(info.value.problems) == 20 and info.value.more == 981
    assert "... and 981 more" in str(info.value)
    assert peak < 8 * 1024 * 1024, peak
    assert snapshot() == before


def test_good_lines_after_a_bad_one_are_not_held_in_memory():
    """Nothing will be written once a line is bad, so nothing is kept for writing."""

    def peak_for(count: int) -> int:
        rows = [line("RunInconclusive", "r-many", reason="p" * 1_000) for _ in range(count)]
        data = jsonl("not json", *rows)
        tracemalloc.start()
        try:
            with pytest.raises(ImportRefused, match="line 1: not JSON"):
                import_journal(io.BytesIO(data), name="many.jsonl")
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    before = snapshot()
    small, large = peak_for(1_000), peak_for(5_000)
    # Five times the lines, not five times the memory (holding them would add some 8 MB).
    assert large < small + 2 * 1024 * 1024, (small, large)
    assert snapshot() == before


class Untouchable(io.RawIOBase):
    """A request body that records whether anybody read it."""

    def __init__(self) -> None:
        self.touched = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        self.touched = True
        return 0

    def read(self, size: int = -1) -> bytes:
        self.touched = True
        return b""

    def readline(self, size: int = -1) -> bytes:
        self.touched = True
        return b""


@pytest.mark.parametrize("url", ["/api/journals", "/import"])
def test_an_oversized_upload_is_refused_before_its_body_is_read(url, settings):
    importer = an_importer()
    settings.IMPORT_MAX_BYTES = 100_000
    client = Client()
    client.force_login(importer)
    body = Untouchable()
    before = snapshot()
    response = client.post(
        url,
        data=b"",
        content_type="multipart/form-data; boundary=xyz",
        CONTENT_LENGTH=str(100 * 1024 * 1024),
        **{"wsgi.input": body},
    )
    assert response.status_code == 413
    assert "the request is 104,857,600 bytes; a journal import may be at most 100,000 bytes" in (
        response.content.decode()
    )
    assert body.touched is False
    assert snapshot() == before
    if url == "/import":  # a page, with the way back, where it was a bare line of text
        page = response.content.decode()
        assert response["Content-Type"].startswith("text/html")
        assert "<h1>Too large</h1>" in page and 'href="/import"' in page
        # answered before the rest of the middleware, with the headers every page has
        assert "default-src" in response["Content-Security-Policy"]
        assert response["X-Frame-Options"] == "DENY"
        assert "MINUTES_IMPORT_MAX_BYTES=BYTES python manage.py import_journal FILE" in page
    else:
        assert response.json()["detail"].startswith("the request is 104,857,600 bytes")


@pytest.mark.parametrize(
    "row, field",
    [
        (line("BudgetDebited", "r-big", amount=10**30), "amount"),
        (line("ModelResponded", "r-big", agent="coder", usage=2**63), "usage.total"),
        (team_started("r-big2", allowance=-(10**30)), "config.allowance"),
        # a fork's point: the runs list keeps it in a 64-bit column
        (line("RunForked", "r-big", parent="r-x", at=10**30, number=1, by="x"), "at"),
        (line("RunForked", "r-big", parent="r-x", at=1, number=-(2**41), by="x"), "number"),
    ],
)
def test_a_count_the_read_models_cannot_add_up_is_refused(row, field, tmp_path):
    """Stored, it would stop every page that catches up with the journal (a 64-bit column)."""
    importer = an_importer()
    before = snapshot()
    answer = import_via("api", importer, jsonl(team_started("r-big"), row), tmp_path)
    assert answer.status == 400
    assert (
        f"line 2: field '{field}': " in answer.text and "more than a run can count" in answer.text
    )
    assert snapshot() == before
    client = Client()
    client.force_login(importer)
    assert client.get("/").status_code == 200


@pytest.mark.parametrize(
    "config, said",
    [
        (
            {"max_turns": 0},
            "field 'config.max_turns': 0: input should be greater than or equal to 1",
        ),
        ({"window": 10**9}, "field 'config.window': 1000000000: input should be less than or"),
        ({"retries": 99}, "field 'config.retries': 99: input should be less than or equal to 5"),
    ],
)
def test_settings_out_of_range_are_refused_and_settings_left_out_are_not(config, said, tmp_path):
    """No replay or resume here would take them (it answered 409 "unreadable settings" after
    the import); a hand-made journal's settings left out still import, as defaults."""
    importer = an_importer()
    before = snapshot()
    answer = import_via("api", importer, jsonl(team_started("r-odd", **config)), tmp_path)
    assert answer.status == 400 and f"line 1: {said}" in answer.text, answer.text
    assert snapshot() == before
    kept = import_via("api", importer, jsonl(team_started("r-partial")), tmp_path)
    assert kept.status == 201, kept.text


@pytest.mark.slow
def test_many_short_streams_are_not_held_in_memory():
    """Each stream is appended a chunk at a time; many streams each short of a chunk are
    appended together once enough is waiting, so memory does not grow with the file."""

    def peak_for(streams: int, run_id: str) -> int:
        # Twenty lines of 8 kB a stream, each stream well short of a chunk (CHUNK lines): the
        # time goes on each new stream's look-ups and each line read under tracemalloc, so
        # fewer, larger lines show the same bound sooner than thousands of 1 kB streams did.
        rows = [team_started(run_id)] + [
            line("RunInconclusive", run_id, reason="p" * 8_000, stream=f"worker-{run_id}-S{n}-w")
            for n in range(streams)
            for _ in range(20)
        ]
        data = jsonl(*rows)
        tracemalloc.start()
        try:
            report = import_journal(io.BytesIO(data), name="streams.jsonl")
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert report.added == len(rows)
        return peak

    # Both past a chunk's lines, so each holds at most a chunk waiting at its peak.
    small, large = peak_for(30, "r-few"), peak_for(120, "r-many")
    # Four times the lines, not four times the memory (holding them all would add some 15 MB).
    assert large < small + 5 * 1024 * 1024, (small, large)


def test_lines_over_a_stored_run_are_one_problem_not_one_a_line(tmp_path):
    """Twenty copies of the same sentence hid whatever else was wrong with the file."""
    a_victim()
    importer = an_importer()
    before = snapshot()
    rows = [line("BudgetDebited", VICTIM, amount=1) for _ in range(30)]
    answer = import_via("api", importer, jsonl(*rows, line("Nope", "r-other")), tmp_path)
    assert answer.status == 400
    problems = json.loads(answer.text)["problems"]
    assert sum(f"run {VICTIM!r} is already stored" in p for p in problems) == 1, problems
    assert any("line 31:" in p for p in problems), problems  # the file's other problem
    assert snapshot() == before
