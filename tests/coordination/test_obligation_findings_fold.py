"""The new findings fold event by event through a JSON state (as the runs projector keeps
them) to exactly what the whole-journal diagnosis says, on every drill."""

from __future__ import annotations

import json

import pytest

from runtime import folds
from runtime.diagnose import Diagnosis
from runtime.metrics import Metrics
from tests.coordination.drills import DRILLS, flown


@pytest.mark.parametrize("name", sorted(DRILLS))
def test_each_drill_folds_through_json_to_the_same_findings_and_metrics(name):
    records = flown(name).records
    for fold in (Diagnosis(), Metrics()):
        state, rows = fold.start(), folds.Rows()
        for rec in records:
            if fold.kinds is None or rec.event.kind in fold.kinds:
                fold.step(state, rec, rows)
            state = json.loads(json.dumps(state))
        assert fold.result(state, rows) == folds.run(fold, records), fold.name
