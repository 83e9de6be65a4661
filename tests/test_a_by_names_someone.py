"""`--by` says who did it, and the audit trail and the pages name them: `interrupt_run`,
`resume_run`, `supersede_intent` and `import_journal` took a blank name (a stop "by" nobody, a
run imported by nobody), a name of a thousand characters, or one holding an escape sequence,
and journalled it. Each is refused by argparse naming --by, exit 2, before anything is read or
written; spaces at a name's ends are dropped."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from journal_store.models import RunSummary, StoredEvent
from tests.test_manage_says_what_is_wrong import manage

COMMANDS = {
    "interrupt_run": ["interrupt_run", "r-any"],
    "resume_run": ["resume_run", "r-any"],
    "supersede_intent": ["supersede_intent", "task-any", "--statement", "s", "--reason", "r"],
    "import_journal": ["import_journal", "no-such-file.jsonl"],
}
BAD = {
    "blank": (" ", "say who: the audit trail names whoever did it"),
    "too long": ("b" * 151, "151 characters; a name is at most 150"),
    "an escape": ("ann\x1b[2J", "the name holds a control character (U+001B) at character 4"),
    "two lines": ("ann\nbob", "a name is one line, without tabs"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("bad", BAD.values(), ids=BAD.keys())
@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_name_that_names_nobody_is_refused_naming_by(command, bad):
    name, said = bad
    before = StoredEvent.objects.count()
    with pytest.raises(CommandError, match="argument --by: ") as refused:
        call_command(*command, "--by", name)
    assert said in str(refused.value)
    assert StoredEvent.objects.count() == before


def test_the_refusal_exits_2_as_argparse_does():
    done = manage("interrupt_run", "r-any", "--by", "")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "error: argument --by: say who" in done.stderr


@pytest.mark.django_db
def test_a_name_is_taken_without_the_spaces_at_its_ends(tmp_path, capsys):
    journal = tmp_path / "j.jsonl"
    started = {"kind": "TeamStarted", "run_id": "r-by", "team": "solo", "scenario": "solo-fix"}
    journal.write_text(json.dumps({**started, "task": "t", "config": {}}) + "\n")
    call_command("import_journal", str(journal), "--by", "  ann  ")
    assert RunSummary.objects.get(run_id="r-by").started_by == "ann"
