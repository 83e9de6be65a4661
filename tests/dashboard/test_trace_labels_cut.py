"""The trace tab's bars and bands quote a failure's error in their labels (a tooltip and an
accessible name, once per bar): scrubbed as the export's is with content on, and cut short, since
an error can be a tool's whole output; the opened call shows it as the export has it."""

from __future__ import annotations

from dashboard import trace_draw
from runtime import trace_view
from tests.runtime.test_otel_status_messages import RUN, journal


def test_the_trace_tab_s_labels_quote_an_error_cut_short():
    records = journal()
    inside = (records[0].position, records[-1].position)
    view = trace_view.fold(RUN, records, inside)
    drawn = trace_draw.drawing(view, "/x/{}")
    [bar] = [b for b in drawn["bars"] if b["state"] == "failed"]
    assert "failed: request failed: Authorization: [REDACTED]" in bar["label"]
    assert len(bar["label"]) < 400
    assert all(len(b["label"]) < 400 for b in drawn["bands"])
