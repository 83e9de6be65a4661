"""The journal toolbox on the command line: fly, resume, replay, views, interrupt."""

from __future__ import annotations

import contextlib
import errno
import io
import json
import shutil
from urllib.error import URLError

import pytest

from runtime import cli, cli_fly, cli_stop
from runtime.cli import main
from runtime.cli_stop import stop_path


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def flight(tmp_path_factory):
    """One solo flight for the module, flown as a test's was: its journal's path, its output."""
    path = tmp_path_factory.mktemp("flight") / "j.jsonl"
    argv = ["fly", "--team", "solo", "--scenario", "solo-fix", "--journal", str(path), "--json"]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    assert code == 0, err.getvalue()
    return path, json.loads(out.getvalue())


@pytest.fixture
def flown(flight, tmp_path):
    """The module's flight, its folder (the journal, the run's workspace) copied into the
    test's own: each test had one flown for it (~3 s, 30 of them), to read or to spoil alone.
    The journal names no path of its folder, so the copy is the flight a test would have flown
    there; its output names the journal where it was flown."""
    path, out = flight
    shutil.copytree(path.parent, tmp_path, symlinks=True, dirs_exist_ok=True)
    return tmp_path / path.name, out


def test_fly_prints_the_outcome_bill_and_journal_path(flight):
    path, out = flight
    assert out["status"] == "done" and out["journal"] == str(path)
    coder = out["bill"]["agents"]["coder"]
    assert (coder["tokens"], coder["calls"], coder["share"], coder["model"]) == (
        520,
        7,
        1.0,
        "scripted",
    )
    assert out["bill"]["remaining"] == 5_000 - 520


def test_a_finished_flight_leaves_no_snapshot_beside_its_journal(flight):
    """The solo coder keeps snapshots as it goes (runtime/snapshots.py); a run that ended with
    a verdict is not resumed, so they go, and their directory with them."""
    path, out = flight
    assert out["status"] == "done"
    assert not (path.parent / f"{path.name}.snapshots").exists()


def test_another_runs_snapshot_beside_the_journal_is_left(tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    kept = tmp_path / "j.jsonl.snapshots"
    kept.mkdir()
    (kept / "another-run.a.snapshot").write_bytes(b"kept")
    argv = ["fly", "--team", "solo", "--scenario", "solo-fix", "--journal", str(path)]
    assert run(capsys, *argv)[0] == 0
    assert [p.name for p in kept.iterdir()] == ["another-run.a.snapshot"]


def test_replay_prints_identical(flown, capsys):
    path, _ = flown
    assert run(capsys, "replay", str(path))[:2] == (0, "identical\n")


def test_views_prints_bill_threads_audit_and_resume_point(flown, capsys):
    path, _ = flown
    code, out, _ = run(capsys, "views", str(path))
    views = json.loads(out)
    assert code == 0 and set(views) == {
        "status",
        "bill",
        "threads",
        "audit",
        "resume_point",
        "findings",
        "metrics",
    }
    assert views["resume_point"]["stage"] == "complete"
    assert views["bill"]["balanced"] is True


def test_an_interrupted_flight_stops_at_a_boundary_and_resumes(tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    code, said, _ = run(capsys, "interrupt", str(path), "--reason", "wrong repo")
    # No journal there yet (a mistyped path reads the same): it says so, not "asked the run".
    assert code == 0 and said.startswith(f"no journal at {path} yet: a flight started with")
    code, out, _ = run(
        capsys, "fly", "--team", "solo", "--scenario", "solo-fix", "--journal", str(path)
    )
    assert code == 4 and "interrupted" in out
    assert json.loads(run(capsys, "views", str(path))[1])["status"] == "interrupted"

    code, out, _ = run(capsys, "resume", str(path))
    assert code == 0 and "done" in out and not stop_path(path).exists()
    audit = json.loads(run(capsys, "views", str(path))[1])["audit"]
    decisions = [(a["what"], a["why"]) for a in audit if a.get("human")]
    assert decisions == [("RunInterrupted", "wrong repo"), ("RunResumed", "")]
    assert run(capsys, "replay", str(path))[:2] == (0, "identical\n")


def test_an_interrupt_of_a_journal_that_is_there_asks_its_run_to_stop(flown, capsys):
    path, _ = flown
    # The journal of a flight still at work (or killed mid-run): its first lines.
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:8]))
    code, said, _ = run(capsys, "interrupt", str(path))
    assert (code, said) == (
        0,
        f"asked the run journalled at {path} to stop at its next turn boundary\n",
    )
    assert stop_path(path).exists()


def test_an_interrupt_of_a_journal_whose_runs_have_finished_is_refused(flown, capsys):
    """The stop stayed on file, said it had asked the run to stop, and stopped the next flight
    into that journal at its first turn boundary."""
    path, out = flown
    code, _, err = run(capsys, "interrupt", str(path))
    assert code == 2 and err == (
        f"error: the run journalled at {path} is not running ({out['run_id']} done): there is "
        "nothing to stop\n"
    )
    assert not stop_path(path).exists()


def test_an_interrupt_of_an_interrupted_run_or_one_asked_already_is_refused(tmp_path, capsys):
    """Of an interrupted run, the stop said yes and `resume` took it away and went on to the
    end; asked twice, the second reason wrote over the first."""
    path = tmp_path / "j.jsonl"
    assert run(capsys, "interrupt", str(path), "--reason", "first")[0] == 0
    code, _, err = run(capsys, "interrupt", str(path), "--reason", "second")
    assert code == 2 and "was asked to stop already" in err
    assert json.loads(stop_path(path).read_text())["reason"] == "first"
    assert run(capsys, "fly", "--team", "solo", "--journal", str(path))[0] == 4
    stop_path(path).unlink()  # as after Ctrl-C, which leaves no stop file
    code, _, err = run(capsys, "interrupt", str(path), "--reason", "stay stopped")
    run_id = path.read_text().split('"run_id":"', 1)[1].split('"', 1)[0]
    assert code == 2 and err == (
        f"error: the run journalled at {path} is not running ({run_id} interrupted: `resume` "
        "goes on): there is nothing to stop\n"
    )
    assert not stop_path(path).exists()


@pytest.mark.parametrize(
    "reason, said",
    [
        ("stop\x1b[2J now", "the reason holds a control character (U+001B) at character 5"),
        ("x" * 2_001, "the reason is 2,001 characters; at most 2,000"),
    ],
)
def test_an_interrupt_whose_reason_could_not_be_journalled_is_refused(
    tmp_path, capsys, reason, said
):
    """The reason is journalled as the stop's: an escape sequence went into the journal (and
    steered the terminal of whoever read it raw), as the pages and the API refuse it."""
    path = tmp_path / "j.jsonl"
    code, _, err = run(capsys, "interrupt", str(path), "--reason", reason)
    assert code == 2 and f"error: --reason: {said}" in err
    assert not stop_path(path).exists()


def test_a_stop_file_from_elsewhere_is_journalled_only_as_the_command_would_write_it(
    tmp_path, capsys
):
    """Another terminal may write the stop file: a name or a reason the command refuses is
    not journalled as it stands (the run is stopped all the same)."""
    path = tmp_path / "j.jsonl"
    stop_path(path).write_text(json.dumps({"by": "ann\x1b]0;owned\x07", "reason": "x\x00y"}))
    code, _, _ = run(capsys, "fly", "--team", "solo", "--journal", str(path))
    assert code == 4
    [stopped] = [
        json.loads(line) for line in path.read_text().splitlines() if "Interrupted" in line
    ]
    assert stopped["by"] == cli_stop.operator()
    assert stopped["reason"] == (
        "(the stop file's reason was not kept: the reason holds a NUL character (U+0000) at "
        "character 2, which no text here may hold)"
    )


def test_a_resume_without_the_runs_workspace_is_refused_writing_nothing(flown, tmp_path, capsys):
    """A journal cut by a crash and resumed in another folder: every tool call failed on the
    missing workspace, each written down, and the suite's check ended it (exit 2, 20 lines
    become 42)."""
    path, out = flown
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    cut = elsewhere / path.name
    cut.write_text("".join(path.read_text().splitlines(keepends=True)[:20]))
    before = cut.read_text()
    code, _, err = run(capsys, "resume", str(cut))
    assert code == 2 and err == (
        f"error: run {out['run_id']} cannot go on here: its workspace "
        f"{out['run_id']}.workspace is not in {elsewhere}. Nothing of the resume was written: "
        "resume it where its workspace is (--workspaces names the folder that holds it)\n"
    )
    assert cut.read_text() == before
    code, said, _ = run(capsys, "resume", str(cut), "--workspaces", str(path.parent))
    assert code == 0 and "done" in said


def test_resuming_a_finished_run_does_nothing(flown, capsys):
    path, _ = flown
    before = path.read_text()
    code, out, _ = run(capsys, "resume", str(path))
    assert code == 0 and "already finished" in out and path.read_text() == before


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["fly", "--team", "solo", "--scenario", "nope", "--journal", "{tmp}/j.jsonl"],
            "team 'solo' has no scenario 'nope'; known: solo-fix",
        ),
        (["replay", "{tmp}/missing.jsonl"], "no journal at"),
        (
            [
                "fly",
                "--team",
                "solo",
                "--journal",
                "{tmp}/j.jsonl",
                "--model-for",
                "coder=scripted",
                "--model-for",
                "coder=endpoint",
            ],
            "--model-for names coder twice (scripted, then endpoint): say each agent once",
        ),
    ],
)
def test_bad_input_is_a_clear_error_and_exit_2(tmp_path, capsys, argv, message):
    code, _, err = run(capsys, *[a.format(tmp=tmp_path) for a in argv])
    assert code == 2 and message in err


def test_a_path_that_cannot_be_used_is_named_without_a_traceback(flown, tmp_path, capsys):
    """A journal that is a directory, an output in a folder that is not there: the error names
    the path and what is wrong with it (exit 2), where a traceback ended the command."""
    path, _ = flown
    code, _, err = run(capsys, "fly", "--team", "solo", "--journal", str(tmp_path))
    assert (code, err) == (2, f"error: {tmp_path} is not a journal file: a folder\n")
    out = tmp_path / "no" / "such" / "trace.json"
    code, _, err = run(capsys, "otlp", str(path), "-o", str(out))
    assert (code, err) == (2, f"error: {out}: No such file or directory\n")


@pytest.mark.parametrize(
    "failure",
    [OSError(errno.ENOSPC, "No space left on device"), URLError("connection refused")],
    ids=["disk full", "network"],
)
def test_an_os_failure_that_names_no_path_is_not_called_bad_input(
    flown, capsys, monkeypatch, failure
):
    """Only a path the caller gave is their bad input (exit 2); a failure of the machine or
    the network goes up as itself, not dressed as a mistyped path."""
    path, _ = flown

    def failing(args):
        raise failure

    monkeypatch.setattr(cli, "cmd_views", failing)
    with pytest.raises(type(failure)):
        cli.main(["views", str(path)])


def test_a_corrupt_journal_names_the_line(flown, capsys):
    path, _ = flown
    lines = path.read_text().splitlines()
    lines[5] = lines[5][:-1]
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run(capsys, "views", str(path))
    assert code == 2 and "line 6: not JSON" in err


def test_a_torn_final_line_is_reported_and_the_rest_still_reads(flown, capsys):
    path, _ = flown
    with open(path, "a") as f:
        f.write('{"kind": "ModelCal')
    code, _out, err = run(capsys, "views", str(path))
    assert code == 0 and "torn final line" in err


@pytest.mark.parametrize("command", ["views", "diagnose", "otlp", "replay", "resume"])
def test_a_run_the_journal_does_not_hold_is_named_not_read_as_empty(flown, capsys, command):
    """A mistyped --run read as a run with no events: views said it was running, diagnose
    found nothing and otlp gave an empty trace, all with exit 0; replay and resume said the
    journal did not start with TeamStarted. Now each names the run and the runs it holds."""
    path, out = flown
    code, stdout, err = run(capsys, command, str(path), "--run", "r-nope")
    assert (code, stdout) == (2, "")
    assert err == f"error: the journal holds no run 'r-nope' (it holds {out['run_id']})\n"


@pytest.mark.parametrize("given", ["a b", "../x", ".hidden", "r" * 65])
@pytest.mark.parametrize("command", ["fly", "fork"])
def test_a_run_id_the_store_would_refuse_is_refused_naming_run_id(
    flown, tmp_path, capsys, command, given
):
    """--run-id is held to the rule imported run ids are (journal_store/admission.py): an id
    of 65 characters was flown into a journal no store would import, and a space or a slash
    was refused as "field 'workspace'", an option nobody gave."""
    path, _ = flown
    argv = {
        "fly": ["fly", "--team", "solo", "--journal", str(tmp_path / "new.jsonl")],
        "fork": ["fork", str(path), "--at", "3"],
    }[command]
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--run-id", given])
    err = capsys.readouterr().err
    assert exited.value.code == 2
    assert f"argument --run-id: {given!r} is not a run id (1 to 64 letters" in err
    assert not (tmp_path / "new.jsonl").exists()


def test_a_content_length_with_no_content_is_refused(flown, capsys):
    path, _ = flown
    with pytest.raises(SystemExit) as exited:
        main(["otlp", str(path), "--no-content", "--content-chars", "5"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "argument --content-chars: not allowed with argument --no-content" in err


@pytest.mark.parametrize("order", ["a/b", ""])
def test_an_order_that_is_no_order_id_is_refused_naming_order(tmp_path, capsys, order):
    """As start_run and the page say it: the settings' check said "bad settings: field
    'settings.desk.order_id': String should match pattern ...", which is no flag."""
    argv = ["fly", "--team", "support-desk", "--journal", str(tmp_path / "new.jsonl")]
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--order", order])
    assert exited.value.code == 2
    assert "argument --order: an order id is letters, digits" in capsys.readouterr().err
    assert not (tmp_path / "new.jsonl").exists()


@pytest.mark.parametrize(
    "argv, said",
    [
        (["fly", "--max-turns", "0"], "argument --max-turns: must be from 1 to 5,000, not 0"),
        (["fly", "--allowance", "-5"], "argument --allowance: must be from 1 to "),
        (["fly", "--retries", "9"], "argument --retries: must be from 0 to 5, not 9"),
        (["fly", "--max-turns", "x"], "argument --max-turns: not a whole number: 'x'"),
        (["fork", "--at", "3", "--allowance", "0"], "argument --allowance: must be from 1"),
        (["otlp", "--content-chars", "0"], "argument --content-chars: must be at least 1, not 0"),
    ],
)
def test_a_number_out_of_range_is_refused_naming_its_flag(flown, tmp_path, capsys, argv, said):
    """Held to the settings' own bounds by argparse, before anything is read or written: the
    settings' check said "bad settings: field 'max_turns'", which is no flag, and the trace's
    "content_chars must be at least 1"."""
    path, _ = flown
    target = {"fly": ["--team", "solo", "--journal", str(tmp_path / "new.jsonl")]}
    command, *rest = argv
    with pytest.raises(SystemExit) as exited:
        main([command, *target.get(command, [str(path)]), *rest])
    assert exited.value.code == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "new.jsonl").exists()


def test_the_help_summary_names_every_command(capsys):
    """`python -m runtime --help` opens with a line per command; diff, fork and zi had none."""
    with pytest.raises(SystemExit):
        main(["--help"])
    summary = capsys.readouterr().out.split("Exit status:")[0]
    commands = ["fly", "resume", "replay", "baseline", "views", "diagnose", "diff", "fork", "zi"]
    for command in [*commands, "otlp", "interrupt"]:
        assert f"\n    {command} " in summary, command


def test_a_journal_of_many_runs_is_named_by_its_first_ten_and_how_many_more():
    """A store's export can hold thousands of runs: the refusal names some, not all."""
    from runtime import flight
    from runtime.journal import MemoryJournal

    streams = [f"run-r-{n:02d}" for n in range(13)] + ["lease-r-00"]
    with pytest.raises(flight.FlightError) as several:
        flight.find_run(MemoryJournal(), streams)
    assert str(several.value) == (
        "the journal holds several runs (r-00, r-01, r-02, r-03, r-04, r-05, r-06, r-07, r-08,"
        " r-09 and 3 more): name one with --run"
    )
    with pytest.raises(flight.FlightError, match=r"no run 'r-99' \(it holds r-00, .* and 3 more\)"):
        flight.find_run(MemoryJournal(), streams, "r-99")
    assert flight.find_run(MemoryJournal(), streams, "r-12") == "r-12"


def test_fly_says_the_runs_findings_beside_its_outcome(tmp_path, capsys):
    path = tmp_path / "j.jsonl"
    argv = ["fly", "--team", "repo-fix", "--scenario", "budget-starved", "--journal", str(path)]
    code, out, _ = run(capsys, *argv)
    assert code == cli.EXIT_VERDICT
    halted = [
        n for n, line in enumerate(path.read_text().splitlines(), 1) if "BudgetExhausted" in line
    ]
    assert out.endswith(
        "findings:\n"
        f"  budget exhausted: coder ran out of budget on T1 before finishing it (the run's "
        f"allowance 400 tokens less 80 kept for verification, spent 350) (event {halted[0]})\n"
    )
    path.unlink()
    code, out, _ = run(capsys, *argv, "--json")
    assert [f["kind"] for f in json.loads(out)["findings"]] == ["budget_exhausted"]


def test_a_run_without_findings_says_none(flown, capsys):
    path, out = flown
    assert out["findings"] == []
    _code, text, _ = run(capsys, "resume", str(path))
    assert text.rstrip().endswith("findings: none")


def test_a_run_done_with_its_money_steps_undone_says_compensated_and_exits_3(tmp_path, capsys):
    """A refund whose saga undid its steps ended 'done', exit 0, though no verified success
    (docs/metrics.md); the pages list it as compensated."""
    journal = tmp_path / "saga.jsonl"
    argv = ["fly", "--team", "support-triage", "--scenario", "refund-saga"]
    code = main([*argv, "--journal", str(journal), "--no-sandbox", "--json"])
    outcome = json.loads(capsys.readouterr().out)
    assert (code, outcome["status"]) == (3, "compensated"), outcome
    assert "undone: credit, label" in outcome["reason"]


def test_ctrl_c_while_a_finished_flight_prints_its_report_stops_in_a_line(
    tmp_path, capsys, monkeypatch
):
    """The flight hands Ctrl-C back when it ends; pressed while its report was printed, it
    came out as a traceback. Now a line, the shell's status for Ctrl-C, and the run whole."""
    path = tmp_path / "j.jsonl"

    def pressed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_fly, "report", pressed)
    code, out, err = run(
        capsys, "fly", "--team", "solo", "--scenario", "solo-fix", "--journal", str(path)
    )
    assert (code, out) == (cli.EXIT_CTRL_C, "")
    assert err == f"interrupted (Ctrl-C); {path} keeps every event written before it\n"
    monkeypatch.undo()
    code, out, _ = run(capsys, "replay", str(path))
    assert code == 0 and "identical" in out
