"""The store benches' typical event: a model response with one tool call, ~300 bytes of JSON
(bench/store.py, bench/prefix_index_appends.py)."""

from __future__ import annotations

from runtime.events import ModelResponded, Usage


def event(run: str, n: int) -> ModelResponded:
    call = {"path": "textparse/parser.py", "old": "x" * 40, "new": "y" * 60}
    return ModelResponded(
        run_id=run,
        agent="coder",
        turn=n,
        task_id="T1",
        text="",
        tool_calls=[{"id": f"c{n}", "name": "edit_file", "args": call}],
        usage=Usage(total=120, prompt=100, completion=20),
    )
