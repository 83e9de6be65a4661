"""Set again the figures the metrics page sums, for the runs projected before a correction of
the metrics fold's result (data migrations 0025, 0027): the fold's state is what later events
need, and its result is taken from it, so a correction of the result alone needs no replay of
a run's events. What needs one is a fork's copied prefix, whose sums were taken at its
RunForked by the fold as it was then: it is folded again up to its last RunForked. The rollup
is summed anew. `manage.py rebuild_projections` gives the same.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

Mend = Callable[[str, dict[str, Any]], None]


def refigure(apps: Any, alias: str, names: Iterable[str], mend: Mend | None = None) -> None:
    """The summary columns `names` of every run with a metrics state, set from that state,
    after `mend(run_id, state)` if given, and its copied prefix folded again if it is a fork."""
    from journal_store import metrics_days
    from journal_store.journal import DjangoJournal
    from journal_store.run_columns import FOLDS, columns_of
    from runtime.flight import run_records
    from runtime.metrics import DISCARD

    names = tuple(names)
    runs = apps.get_model("journal_store", "RunSummary").objects.using(alias)
    states = apps.get_model("journal_store", "RunState").objects.using(alias)
    journal = DjangoJournal(alias)
    fold = FOLDS["metrics"]
    forks = set(runs.exclude(parent_id="").values_list("run_id", flat=True))

    def copied(run_id: str, state: dict[str, Any]) -> None:
        records = run_records(journal, run_id)
        forked = [i for i, r in enumerate(records) if r.event.kind == "RunForked"]
        if not forked:
            return
        prefix = fold.start()
        for rec in records[: forked[-1] + 1]:
            if fold.kinds is None or rec.event.kind in fold.kinds:
                fold.step(prefix, rec, DISCARD)
        state["copied"], state["forks"] = prefix["copied"], prefix["forks"]

    # The ids first: SQLite does not keep a table's iteration apart from writes to that table.
    ids = list(states.filter(fold="metrics").values_list("pk", flat=True))
    for at in range(0, len(ids), 2_000):
        for stored in states.filter(pk__in=ids[at : at + 2_000]):
            state = json.loads(stored.state)
            if mend is not None:
                mend(stored.run_id, state)
            if stored.run_id in forks and "copied" in state:  # projected past its RunForked
                copied(stored.run_id, state)
            stored.state = json.dumps(state, separators=(",", ":"))
            stored.save(update_fields=["state"])
            columns = columns_of(fold, state)
            runs.filter(run_id=stored.run_id).update(**{name: columns[name] for name in names})
    rollup = apps.get_model("journal_store", "MetricsDay").objects.using(alias)
    metrics_days.refill(runs, rollup)
