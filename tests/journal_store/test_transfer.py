"""Import and export of JSONL journals: round trips, idempotence, reference journals, and bad
input that imports nothing and names the line."""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from journal_store import projection
from journal_store.journal import DjangoJournal
from journal_store.models import RunSummary, StoredEvent
from journal_store.transfer import ImportRefused, export, import_journal
from runtime.events import BudgetDebited
from tests.journal_store.conftest import on_every_backend

FIXTURES = Path(__file__).parents[1] / "fixtures" / "journals"

REFERENCE = [
    {
        "kind": "MessageSent",
        "sender": "orchestrator",
        "recipient": "coder",
        "task_id": "T1",
        "performative": "request",
    },
    {"kind": "MessageDelivered", "recipient": "coder", "task_id": "T1"},
    {"kind": "RunStarted", "agent": "coder", "task": "Make the failing parser test pass."},
    {"kind": "ModelResponded", "agent": "coder", "usage": 120},
    {
        "kind": "ToolReturned",
        "agent": "coder",
        "tool": "run_tests",
        "error": "RuntimeError: runner exited 137",
    },
    {"kind": "ModelResponded", "agent": "coder", "usage": 120},
]


def jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def load(data: bytes, alias="default", **options):
    return import_journal(io.BytesIO(data), using=alias, **options)


@pytest.mark.slow
@on_every_backend()
# parallel-writers: its writers' leases are streams of its own (lease-RUN:fix:T1)
@pytest.mark.parametrize("scenario", ["first-flight", "parallel-writers"])
def test_import_then_export_gives_back_the_same_file(fly_team, alias, scenario):
    flown = fly_team(scenario)
    original = flown.path.read_bytes()
    lines = len(original.splitlines())
    report = load(original, alias)
    assert report.run_ids == [flown.run_id] and report.added == lines
    out = io.StringIO()
    assert export(flown.run_id, out, alias) == lines
    assert out.getvalue().encode() == original
    assert [r.event for r in DjangoJournal(alias).read(f"run-{flown.run_id}")] == flown.events


@pytest.mark.slow
@on_every_backend()
def test_importing_the_same_file_twice_adds_nothing(fly_team, alias):
    original = fly_team("premature-done").path.read_bytes()
    load(original, alias)
    again = load(original, alias)
    assert again.added == 0 and again.events > 0
    # The run's events once, and this server's one note that it imported them (JournalImported).
    stored = StoredEvent.objects.using(alias)
    assert stored.exclude(kind="JournalImported").count() == again.events
    assert stored.filter(kind="JournalImported").count() == 1


@on_every_backend()
def test_a_reference_runtime_journal_imports_as_a_run_and_only_once(alias):
    first = load(jsonl(REFERENCE), alias)
    [run_id] = first.run_ids
    assert run_id.startswith("r-") and first.added == len(REFERENCE)
    assert load(jsonl(REFERENCE), alias).added == 0
    records = DjangoJournal(alias).read(f"run-{run_id}")
    assert [r.version for r in records] == list(range(1, len(REFERENCE) + 1))
    assert records[4].event.error.type == "RuntimeError"  # upcast on read
    # two identical lines are still two events
    assert records[3].event.id != records[5].event.id


@on_every_backend()
def test_a_renamed_import_is_a_new_run_and_still_idempotent(alias):
    data = jsonl(REFERENCE)
    original = load(data, alias).run_ids[0]
    renamed = load(data, alias, run_id="r-copy")
    assert renamed.run_ids == ["r-copy"] and renamed.added == len(REFERENCE)
    assert load(data, alias, run_id="r-copy").added == 0
    assert DjangoJournal(alias).version(f"run-{original}") == len(REFERENCE)
    assert DjangoJournal(alias).version("run-r-copy") == len(REFERENCE)


@on_every_backend()
def test_a_file_of_two_runs_given_one_new_id_is_refused_at_the_second_runs_first_line(alias):
    """The two runs' lines, renamed into one stream, were refused as 'broken version sequence
    in stream run-r-new: expected version 4, found 1', which says nothing of why."""
    two = [
        {"kind": "BudgetDebited", "amount": n, "run_id": run, "stream": f"run-{run}", "version": n}
        for run in ("r-one", "r-two")
        for n in (1, 2, 3)
    ]
    with pytest.raises(ImportRefused) as refused:
        load(jsonl(two), alias, run_id="r-new")
    assert refused.value.problems == [
        "line 4: run 'r-two', where the lines before are run 'r-one': a new run id renames a "
        "file of one run; import this one without it, or export each run on its own"
    ]
    assert StoredEvent.objects.using(alias).count() == 0
    assert load(jsonl(two), alias).run_ids == ["r-one", "r-two"]  # as they are: both


@on_every_backend()
def test_a_file_of_one_run_with_lines_naming_no_run_is_renamed_whole(alias):
    """A line naming no run is the file's own run's: the check of two runs took it, given the
    new id, for a second run and refused a file of one."""
    lines = [
        {"kind": "BudgetDebited", "amount": 1},  # names no run
        {"kind": "BudgetDebited", "amount": 2, "run_id": "r-one"},
        {"kind": "BudgetDebited", "amount": 3},
        {"kind": "BudgetDebited", "amount": 4, "run_id": "r-one"},
    ]
    renamed = load(jsonl(lines), alias, run_id="r-new")
    assert renamed.run_ids == ["r-new"] and renamed.added == 4


GOOD = json.dumps(
    {"kind": "BudgetDebited", "amount": 1, "run_id": "r-x", "stream": "run-r-x", "version": 1}
)


@pytest.mark.parametrize(
    "lines, problem",
    [
        ([GOOD, "{not json"], "line 2: not JSON"),
        ([GOOD, '{"kind": "Teleported", "run_id": "r-x"}'], "line 2: unknown kind 'Teleported'"),
        (
            [GOOD, '{"kind": "BudgetDebited", "run_id": "r-x"}'],
            "line 2: BudgetDebited: missing field 'amount'",
        ),
        (
            [GOOD, '{"kind": "BudgetDebited", "amount": "lots", "run_id": "r-x"}'],
            "line 2: BudgetDebited: field 'amount'",
        ),
        (
            [
                GOOD,
                '{"kind": "BudgetDebited", "amount": 1, "run_id": "r-x", "stream": "run-r-x", "version": 5}',
            ],
            "line 2: broken version sequence in stream 'run-r-x': expected version 2, found 5",
        ),
        ([GOOD, "", GOOD.replace('"version": 1', '"version": 2')], "line 2: empty line"),
        (
            [GOOD, '{"kind": "BudgetDebited", "amount": 1, "pad": "' + "x" * 300 + '"}'],
            "line 2: longer than the limit of 200 bytes",
        ),
    ],
)
@on_every_backend()
def test_bad_input_imports_nothing_and_names_the_line(alias, settings, lines, problem):
    settings.IMPORT_MAX_LINE_BYTES = 200
    with pytest.raises(ImportRefused) as info:
        load(("\n".join(lines) + "\n").encode(), alias)
    assert problem in str(info.value)
    assert StoredEvent.objects.using(alias).count() == 0


@pytest.mark.parametrize(
    "line, where",
    [
        # An escaped lone surrogate: Python's JSON reader takes it, no UTF-8 text holds it.
        (
            b'{"kind": "BudgetDebited", "amount": 1, "run_id": "r-x", "agent": "a\\ud800"}',
            "'agent'",
        ),
        # The same as UTF-8-encoded bytes (CESU-8), which is not UTF-8 either.
        (
            b'{"kind": "BudgetDebited", "amount": 1, "run_id": "r-x", "agent": "a\xed\xa0\x80"}',
            "'agent'",
        ),
        (
            b'{"kind": "ToolDispatched", "tool": "t", "run_id": "r-x", "args": {"\\udfff": 1}}',
            "'args'",
        ),
    ],
)
@on_every_backend()
def test_a_lone_surrogate_is_refused_naming_its_line_and_field(alias, line, where):
    """A string holding half a UTF-16 pair cannot be stored as UTF-8: the line is refused,
    naming the field, where the import failed with a 500 (and the command with a traceback)."""
    with pytest.raises(ImportRefused) as info:
        load(GOOD.encode() + b"\n" + line + b"\n", alias)
    assert info.value.problems == [
        f"line 2: field {where} holds a lone UTF-16 surrogate, which is not Unicode text"
    ]
    assert StoredEvent.objects.using(alias).count() == 0


@on_every_backend(transaction=True)
def test_a_nul_character_is_imported_and_the_projectors_catch_up_past_it(alias):
    """PostgreSQL's text has no NUL: the import went in, then every projector's catch-up (the
    next page of anybody's) failed on the run's task, for good. The journal keeps it; the read
    models hold U+FFFD (journal_store/projection.py)."""
    task = {"kind": "RunStarted", "agent": "coder", "task": "fix it\u0000 now", "run_id": "r-x"}
    report = load(GOOD.encode() + b"\n" + json.dumps(task).encode() + b"\n", alias)
    assert report.added == 2
    projection.catch_up(using=alias)
    assert projection.behind(alias) == dict.fromkeys(projection.PROJECTORS, 0)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
@on_every_backend()
def test_a_utf16_file_is_named_as_such_once(alias, encoding):
    """A journal saved as UTF-16 (PowerShell's `>` writes it) was refused line by line as not
    UTF-8 text, all but its first line (read as UTF-16 from the byte order mark): one problem
    now, saying what the file is and what it should be."""
    text = GOOD + "\n" + GOOD.replace('"version": 1', '"version": 2') + "\n"
    data = ("\ufeff" if encoding == "utf-16-be" else "") + text
    with pytest.raises(ImportRefused) as info:
        load(data.encode(encoding), alias)
    name = encoding.split("-")[0].upper() + "-" + encoding.split("-")[1]
    assert info.value.problems == [
        f"line 1: the file is {name} text (it begins with a {name} byte order mark); "
        "a journal is UTF-8: save it as UTF-8 (iconv -f " + name + " -t UTF-8)"
    ]
    assert StoredEvent.objects.using(alias).count() == 0


@on_every_backend()
def test_every_problem_is_listed_not_just_the_first(alias):
    data = b'{"kind": "Nope"}\n{"kind": "BudgetDebited"}\n{"kind": "BudgetDebited", "amount": 1}\n'
    with pytest.raises(ImportRefused) as info:
        load(data, alias)
    assert [p.split(":")[0] for p in info.value.problems] == ["line 1", "line 2"]


@on_every_backend()
def test_a_file_over_the_size_limit_is_refused_before_parsing(alias, settings):
    settings.IMPORT_MAX_BYTES = 100
    with pytest.raises(ImportRefused, match="over the limit of 100 bytes"):
        load(b"x" * 101, alias, size=101)
    with pytest.raises(ImportRefused, match="over the limit of 100 bytes"):
        load(jsonl(REFERENCE), alias)  # no size given: found while fingerprinting
    # In thousands, as the import's other limits and sizes are said.
    settings.IMPORT_MAX_BYTES = 1_000
    with pytest.raises(ImportRefused, match="1,001 bytes is over the limit of 1,000 bytes"):
        load(b"x" * 1_001, alias, size=1_001)
    assert StoredEvent.objects.using(alias).count() == 0


@on_every_backend()
def test_a_torn_final_line_is_reported_and_the_rest_imported_only_when_allowed(alias):
    data = jsonl(REFERENCE[:3]) + b'{"kind": "ModelResp'
    with pytest.raises(ImportRefused, match="line 4: torn final line") as refused:
        load(data, alias)
    assert "allow_torn=true in the API, --allow-torn to manage.py import_journal" in str(
        refused.value.problems
    )
    assert StoredEvent.objects.using(alias).count() == 0
    report = load(data, alias, allow_torn=True)
    assert report.added == 3 and "line 4: torn final line" in report.torn


@on_every_backend()
def test_the_whole_file_after_its_torn_part_is_refused_saying_what_the_store_holds(alias):
    """The store said "a different journal" of the very same one, of which it held the part
    a torn import had let in."""
    lines = [
        {
            "kind": "BudgetDebited",
            "amount": n,
            "run_id": "r-torn",
            "stream": "run-r-torn",
            "version": n,
            "id": f"{n:032x}",
        }
        for n in range(1, 5)
    ]
    whole = jsonl(lines)
    assert load(whole[: whole.rindex(b"{") + 20], alias, allow_torn=True).added == 3
    with pytest.raises(ImportRefused) as refused:
        load(whole, alias)
    [problem] = refused.value.problems
    assert problem.startswith(
        "line 4: run 'r-torn' is already stored, with the first 3 events of stream "
        "'run-r-torn' as this file has them and none after (an earlier import of a part of "
        "this file, a torn one?)"
    )
    assert StoredEvent.objects.using(alias).exclude(kind="JournalImported").count() == 3
    # A file that differs from the stored part is still "a different journal".
    lines[1]["amount"] = 99
    lines[1]["id"] = "f" * 32
    with pytest.raises(ImportRefused, match=r"line 2: .* the store holds a different journal"):
        load(jsonl(lines), alias)


@on_every_backend()
def test_a_store_holding_a_different_journal_refuses_the_import(alias):
    DjangoJournal(alias).append("run-r-x", [BudgetDebited(run_id="r-x", amount=9)], 0)
    with pytest.raises(ImportRefused, match="the store holds a different journal there"):
        load((GOOD + "\n").encode(), alias)
    assert StoredEvent.objects.using(alias).count() == 1


@pytest.mark.django_db
def test_export_memory_does_not_grow_with_the_run():
    journal = DjangoJournal()

    def peak_for(count: int, run: str) -> int:
        events = [BudgetDebited(run_id=run, amount=i) for i in range(count)]
        for i in range(0, count, 1000):
            journal.append(f"run-{run}", events[i : i + 1000], i)
        sink = io.StringIO()
        tracemalloc.start()
        export(run, _Discard())
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        del sink
        return peak

    # Export fetches 2,000 rows at a time: past a few chunks its peak must stop growing.
    small, large = peak_for(6_000, "r-small"), peak_for(30_000, "r-large")
    assert large < small * 1.3, (small, large)  # five times the events, not five times the memory


class _Discard(io.TextIOBase):
    def write(self, s: str) -> int:
        return len(s)


@pytest.mark.django_db
def test_the_commands_import_export_and_rebuild(tmp_path, capsys):
    path = tmp_path / "ref.jsonl"
    path.write_bytes(jsonl(REFERENCE))
    call_command("import_journal", str(path))
    run_id = capsys.readouterr().out.strip()
    assert RunSummary.objects.get(run_id=run_id).event_count == len(REFERENCE)
    out = tmp_path / "out.jsonl"
    call_command("export_journal", run_id, "-o", str(out))
    assert len(out.read_text().splitlines()) == len(REFERENCE)
    call_command("rebuild_projections", "--only", "runs")
    # The run's events, and this server's note that it imported them (JournalImported).
    assert f"from {len(REFERENCE) + 1} events" in capsys.readouterr().out
    # The journal's events, whichever projectors: it said the sum of what each applied (twice
    # the journal for two that read every kind, none for one that reads only its own kinds).
    for only in ([], ["--only", "tags"], ["--only", "runs", "--only", "search"]):
        call_command("rebuild_projections", *only)
        assert f"from {len(REFERENCE) + 1} events" in capsys.readouterr().out, only
    with pytest.raises(CommandError, match="no run 'r-nope'"):
        call_command("export_journal", "r-nope")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"kind": "Nope"}\n')
    with pytest.raises(CommandError, match="line 1: unknown kind 'Nope'"):
        call_command("import_journal", str(bad))
    with pytest.raises(CommandError, match="no file at"):
        call_command("import_journal", str(tmp_path / "missing.jsonl"))


@pytest.mark.slow
@on_every_backend()
def test_one_bad_line_is_one_problem_not_one_per_later_line(fly_team, alias):
    lines = fly_team("first-flight").path.read_bytes().splitlines(keepends=True)
    lines[4] = lines[4][:20] + b"\n"  # cut short: not JSON
    with pytest.raises(ImportRefused) as info:
        load(b"".join(lines), alias)
    assert info.value.problems == [info.value.problems[0]]
    assert info.value.problems[0].startswith(
        "line 5: not JSON: Unterminated string starting at column"
    )
    assert StoredEvent.objects.using(alias).count() == 0


@pytest.mark.django_db
def test_the_api_refuses_an_offset_no_database_can_hold(client):
    from tests.dashboard.conftest import make_user

    client.force_login(make_user("pager"))
    assert client.get("/api/runs?offset=3796577610859758401617920").status_code == 422


@on_every_backend()
def test_an_imported_fan_out_keeps_the_files_order_over_its_streams(alias):
    # The triage fixture interleaves its lines over the run's stream, three workers' and a
    # saga's: appended stream by stream, the run's positions would no longer follow time. (Its
    # effect streams are the ledger's, which an import may not write: left out.)
    lines = (FIXTURES / "support-triage.v1.jsonl").read_bytes().splitlines(keepends=True)
    data = b"".join(line for line in lines if b'"stream":"effect-' not in line)
    report = load(data, alias)
    assert report.added == len(data.splitlines())
    stored = (
        StoredEvent.objects.using(alias)
        .exclude(kind="JournalImported")
        .order_by("position")
        .values_list("event_id", flat=True)
    )
    assert [u.hex for u in stored] == [json.loads(line)["id"] for line in data.splitlines()]


@pytest.mark.parametrize(
    "data, said",
    [
        (gzip.compress(GOOD.encode() + b"\n"), "gzip-compressed: decompress it first (gunzip)"),
        (b"PK\x03\x04\x14\x00\x00\x00" + b"x" * 40, "a zip archive"),
        (bytes(range(256)) * 4, "binary (it holds NUL bytes), not JSON lines"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(1, 256)) * 8, "a PNG image"),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF" + bytes(range(1, 256)), "a JPEG image"),
        (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n" + bytes(range(128, 256)) * 8, "a PDF document"),
        (b"SQLite format 3\x00" + b"\x10\x00" * 50, "an SQLite database"),
        (b"\xfd7zXZ\x00\x00" + bytes(range(1, 256)), "xz-compressed"),
    ],
    ids=["gzip", "zip", "binary", "png", "jpeg", "pdf", "sqlite", "xz"],
)
@on_every_backend()
def test_a_file_that_is_no_text_is_named_as_such_once(alias, data, said):
    """A compressed export or any binary file was refused line by line as not UTF-8 text, and
    its last line offered as a torn one, which allowing would not have helped."""
    with pytest.raises(ImportRefused) as info:
        load(data, alias)
    [problem] = info.value.problems
    assert problem.startswith("line 1: the file is " + said) and "torn" not in problem
    assert StoredEvent.objects.using(alias).count() == 0


@pytest.mark.django_db
def test_the_export_leaves_out_this_stores_pushes_of_the_trace(fly_team):
    """A push is this store's, to its collector: imported elsewhere, the run's page there said
    "Trace pushed" of a store that never pushed it (or "queued" of a push nobody would send)."""
    from journal_store import traces
    from runtime.events import TracePushed, TracePushQueued

    flown = fly_team("first-flight")
    [run_id] = load(flown.path.read_bytes()).run_ids
    pushed = [
        TracePushQueued(run_id=run_id, endpoint="http://collector:4318"),
        TracePushed(run_id=run_id, endpoint="http://collector:4318", spans=21, bytes=9, attempts=1),
    ]
    DjangoJournal().append(f"traces-{run_id}", pushed, 0)
    projection.catch_up()
    assert traces.state(run_id)["state"] == "pushed"
    out = io.StringIO()
    export(run_id, out)
    assert "TracePush" not in out.getvalue()
    assert out.getvalue() == flown.path.read_text()
    [copy] = load(out.getvalue().encode(), run_id="r-copy").run_ids
    assert traces.state(copy) is None
