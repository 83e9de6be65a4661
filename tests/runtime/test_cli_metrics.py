"""`python -m runtime views` prints a run's coordination metrics, on an old journal too."""

from __future__ import annotations

import json
from pathlib import Path

from runtime.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "journals"


def test_views_prints_the_metrics_of_an_old_fixture_journal(capsys):
    code = main(["views", str(FIXTURES / "repo-fix.v1.jsonl")])
    metrics = json.loads(capsys.readouterr().out)["metrics"]
    assert code == 0
    assert metrics["coordination_overhead_ratio"]["value"] == 0.701
    assert metrics["assignment_handoff_count"]["value"] == 5
    assert metrics["deadlock_rate"]["value"] == 0.0  # its requests are the waits: no cycle
    assert metrics["deadlock_rate"]["waits"] == 5


def test_views_counts_the_claims_of_a_fixture_journal_on_their_own_stream(capsys):
    """docs/metrics.md's table: support-desk's claim is on the order's claims stream, which
    `views` did not read (null, "no claim or lease was journalled"), where the server counts it."""
    main(["views", str(FIXTURES / "support-desk.v1.jsonl")])
    rate = json.loads(capsys.readouterr().out)["metrics"]["ownership_conflict_rate"]
    assert (rate["value"], rate["claims"]) == (0.0, 1)
