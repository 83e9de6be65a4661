"""Run ids and event ids in an imported file match strict patterns: a run id is a safe path
segment (no slash, no `..`, no control character, at most 64 characters), an event id is hex
(or a UUID). Each refusal names the line and the field, and nothing is written."""

from __future__ import annotations

import re

import pytest
from django.core.management import CommandError, call_command

from tests.security.import_helpers import (
    CHANNELS,
    an_importer,
    import_via,
    jsonl,
    line,
    refused,
    snapshot,
    team_started,
)

pytestmark = pytest.mark.django_db

BAD_RUN_IDS = [
    "r-evil/../x",
    "../../etc",
    "r-..",
    "r-\x1b[31mred",
    "r-new\nline",
    "r-\x00",
    "r x",
    "r-evil:1",
    "-r",
    "r-" + "a" * 63,
]


@pytest.mark.parametrize("run_id", BAD_RUN_IDS)
def test_an_import_refuses_a_run_id_that_is_not_a_safe_name(run_id, tmp_path):
    importer = an_importer()
    before = snapshot()
    answer = import_via("api", importer, jsonl(team_started(run_id)), tmp_path)
    assert answer.status == 400, answer.text
    assert "line 1: field 'run_id': " in answer.text and "is not a run id" in answer.text
    assert snapshot() == before


@pytest.mark.parametrize("channel", CHANNELS)
def test_a_slash_in_a_run_id_is_refused_on_every_way_in(channel, tmp_path):
    importer = an_importer()
    before = snapshot()
    rows = [team_started("r-fine"), team_started("r-evil/../x")]
    answer = import_via(channel, importer, jsonl(*rows), tmp_path)
    assert answer.status == refused(channel)
    assert "line 2: field 'run_id': 'r-evil/../x' is not a run id" in answer.text
    assert snapshot() == before


@pytest.mark.parametrize(
    "event_id",
    [
        "not-a-uuid",
        "../../x",
        "0123456789abcdef0123456789abcde",
        "g" * 32,
        "",
        "{" + "0" * 32 + "}",
    ],
)
def test_an_import_refuses_an_event_id_that_is_not_hex(event_id, tmp_path):
    importer = an_importer()
    before = snapshot()
    bad = {**line("BudgetDebited", "r-ids", amount=1), "id": event_id}
    answer = import_via("api", importer, jsonl(team_started("r-ids"), bad), tmp_path)
    assert answer.status == 400, answer.text
    assert "line 2: field 'id': " in answer.text and "is not an event id" in answer.text
    assert snapshot() == before


def test_the_command_refuses_a_new_run_id_that_is_not_a_safe_name(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_bytes(jsonl(team_started("r-fine")))
    before = snapshot()
    with pytest.raises(CommandError) as info:
        call_command("import_journal", str(path), "--run-id", "r/../x")
    assert str(info.value).startswith("--run-id: 'r/../x' is not a run id (1 to 64 letters")
    assert "field 'run_id'" not in str(info.value) and info.value.returncode == 2
    assert snapshot() == before


@pytest.mark.parametrize("channel", CHANNELS)
def test_a_run_named_compare_is_refused_as_the_api_could_never_read_it(channel, tmp_path):
    """GET /api/runs/compare is the comparison of two runs: a run imported as `compare` was
    stored and could not be read from the API (its page, /runs/compare/, could be)."""
    importer = an_importer()
    before = snapshot()
    answer = import_via(channel, importer, jsonl(team_started("compare")), tmp_path)
    assert answer.status == refused(channel), answer.text
    said = "line 1: field 'run_id': 'compare' is not a run id ("
    assert said in answer.text and "not 'compare' (the API's /api/runs/compare)" in answer.text
    assert snapshot() == before
    # Another case, or more around it, is a run id as any: /api/runs/Compare reads it.
    kept = import_via(channel, importer, jsonl(team_started("Compare")), tmp_path)
    assert kept.status in (0, 201), kept.text


def test_the_command_line_refuses_compare_as_a_new_run_id(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_bytes(jsonl(team_started("r-fine")))
    with pytest.raises(CommandError, match=re.escape("--run-id: 'compare' is not a run id")):
        call_command("import_journal", str(path), "--run-id", "compare")
