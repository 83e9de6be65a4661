"""What the data migrations that mend the runs projector's read models share: how far the
projector has applied the journal (what it applies later it folds itself), the fill of a new
finding's rows for the runs projected before it, and the metrics' columns set again after a
correction of their fold's result. `manage.py rebuild_projections` gives the same as each.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from runtime.folds import Fold


def applied(apps: Any, alias: str) -> int:
    """The runs projector's checkpoint: the last position it has applied (0: none yet)."""
    found = (
        apps.get_model("journal_store", "Checkpoint")
        .objects.using(alias)
        .filter(name="runs")
        .values_list("position", flat=True)
        .first()
    )
    return found or 0


def findings(
    apps: Any, alias: str, signatures: Iterable[Fold], kinds: Iterable[str], holding: str = ""
) -> None:
    """New findings, `signatures`, read from events every store already holds (`kinds`): each
    run with one of those events the projector applied gets, for each signature it has not
    folded yet, its fold state, its finding rows and its findings count, as the projector
    would have written them. `holding`: only the runs where such an event's stored JSON holds
    this text (a kind as common as MessageSent, narrowed to its ACCEPTs: `"accept"`), so that
    the runs that cannot have the finding are not read at all."""
    from django.db.models import F

    from journal_store import nul
    from journal_store.fold_rows import finding_columns
    from journal_store.journal import DjangoJournal
    from journal_store.projection import compact
    from runtime.flight import run_records
    from runtime.folds import Rows, feed

    upto = applied(apps, alias)
    if not upto:
        return
    model = apps.get_model
    events = model("journal_store", "StoredEvent").objects.using(alias)
    states = model("journal_store", "RunState").objects.using(alias)
    found = model("journal_store", "Finding").objects.using(alias)
    runs = model("journal_store", "RunSummary").objects.using(alias)
    affected = events.filter(kind__in=list(kinds), position__lte=upto)
    if holding:
        affected = affected.filter(data__contains=holding)
    affected = affected.values_list("run_id")
    journal = DjangoJournal(alias)
    signatures = list(signatures)
    for run_id in sorted({run_id for (run_id,) in affected.distinct()}):
        records = [r for r in run_records(journal, run_id) if r.position <= upto]
        added = 0
        for fold in signatures:
            mine = {"run_id": run_id, "fold": fold.name}
            if states.filter(**mine).exists() or found.filter(run_id=run_id, kind=fold.name):
                continue  # folded by the projector already
            state, rows = fold.start(), Rows()
            feed(fold, state, records, rows)
            # As the projector would have: it reads each NUL as U+FFFD (journal_store/nul.py),
            # and PostgreSQL's jsonb refuses a NUL in a finding's detail.
            state = nul.value(state)
            if compact(state) != compact(fold.start()):
                states.create(run_id=run_id, fold=fold.name, state=compact(state))
            for key, row in rows.rows.items():
                columns = finding_columns(fold.name, nul.value(key), nul.value(row))
                found.create(run_id=run_id, **columns)
                added += 1
        if added:
            runs.filter(run_id=run_id).update(findings_count=F("findings_count") + added)


Mend = Callable[[str, dict[str, Any]], None]


def metrics(apps: Any, alias: str, names: Iterable[str], mend: Mend | None = None) -> None:
    """The summary columns `names` of every run with a metrics state, set again from that
    state (after `mend(run_id, state)` if given), for a correction of the metrics fold's
    result: the state is what later events need and the result is taken from it, so no run is
    replayed, but for a fork's copied prefix, whose sums were taken at its RunForked by the
    fold as it was then: it is folded again up to its last RunForked. The rollup is summed
    anew."""
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
