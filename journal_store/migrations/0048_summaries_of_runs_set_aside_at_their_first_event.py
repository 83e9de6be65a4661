"""A run the summaries' fold set aside at its first event (journal_store/stopped.py) now gets a
summary of what is known (its id, its start, status unknown: projection.Runs.set_aside), so
the runs list has it. One set aside so before that change has no summary until the next
rebuild_projections: it had a page, but no row in the runs list, so nobody found it.

Each such run (a StoppedView of the runs' projector whose run has no RunSummary) is given its
summary now, the one set_aside writes, from the row the fold stopped at: the summary and its
share of the metrics rollup a rebuild would write. A run with a summary is left as it stands
(set aside later in its journal, it keeps the one it had before the event), as is one whose
row is gone from the journal. Run again, it writes nothing.

Only the historical models (apps.get_model) and the frozen copies below are used, never the
projector's code: that writes the columns of today's RunSummary, and a store several
migrations behind has only 0047's, so a later migration's column would fail this one."""

from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.db import migrations, transaction

RUNS = "runs"  # projection.Runs.name, whose set aside runs these are
UNFOLDED = "unknown"  # journal_store/stopped.py's status of a run set aside at its first event
NO_DAY = date(1, 1, 1)  # metrics_days.NO_DAY: the rollup's day of a run with no start time

# Frozen copy of projection.FIRST_SUMMARY as 0048 was written (every RunSummary column of 0047
# but run_id): the first summary's columns, the run folds' starts. The status, stage and start
# are set_aside's own, below.
FIRST_SUMMARY: dict[str, Any] = {
    "allowance": None,
    "baseline_of": "",
    "calls": 0,
    "claims": 0,
    "commitments": 0,
    "conflict_latency": None,
    "conflicts_open": 0,
    "conflicts_resolved": 0,
    "contested": 0,
    "coord_seconds": None,
    "coord_tokens": 0,
    "copied_figures": {},
    "cost": 0,
    "dead_letters": 0,
    "deadlocks": 0,
    "deliveries": 0,
    "duration": None,
    "event_count": 0,
    "failed_handoffs": 0,
    "files_written": 0,
    "findings_count": 0,
    "finished_at": None,
    "fork_at": None,
    "handoffs": 0,
    "human_wait": 0.0,
    "independent_verifications": 0,
    "inherited_coord_tokens": 0,
    "inherited_cost": None,
    "inherited_tokens": 0,
    "inherited_work_tokens": 0,
    "last_position": 0,
    "letters_open": 0,
    "lineage": [],
    "lineage_cost": {},
    "livelocked_tasks": 0,
    "looked_at_tasks": 0,
    "model": "",
    "orphaned": 0,
    "overhead_ratio": None,
    "parent_id": "",
    "reason": "",
    "resume_position": 0,
    "reviewed_tasks": 0,
    "scenario": "",
    "shared_files": 0,
    "spent": 0,
    "stage": "plan",
    "stale_deliveries": 0,
    "started_at": None,
    "started_by": "",
    "started_on": None,
    "status": "running",
    "task": "",
    "team": "",
    "tokens": 0,
    "verifications": 0,
    "verified": False,
    "waited": timedelta(0),
    "waiting_for": "",
    "waits": 0,
    "work_seconds": None,
    "work_tokens": 0,
}

# Frozen copy of what metrics_days.share gives for such a summary: every sum 0 but these (its
# cost is 0, not None, so it counts as priced).
SHARE = {"runs": 1, "priced": 1}


def summarize(apps: Any, schema_editor: Any) -> None:
    using = schema_editor.connection.alias
    aside = apps.get_model("journal_store", "StoppedView").objects.using(using)
    summaries = apps.get_model("journal_store", "RunSummary").objects.using(using)
    events = apps.get_model("journal_store", "StoredEvent").objects.using(using)
    rollup = apps.get_model("journal_store", "MetricsDay").objects.using(using)
    stops = dict(aside.filter(projector=RUNS).values_list("run_id", "position"))
    if not stops:
        return
    have = set(summaries.filter(run_id__in=list(stops)).values_list("run_id", flat=True))
    for run_id, position in sorted(stops.items()):
        if run_id in have:
            continue
        row = events.filter(position=position).values_list("run_id", "t").first()
        if row is None or row[0] != run_id:
            continue  # gone from the journal: a rebuild has nothing to fold either
        t = row[1]
        start = datetime.fromtimestamp(t, UTC) if t and t > 0 else None
        day = start.date() if start else None
        known = {"status": UNFOLDED, "stage": "", "started_at": start, "started_on": day}
        summary = {**FIRST_SUMMARY, **known}
        with transaction.atomic(using=using):
            summaries.create(run_id=run_id, **summary)
            group, _ = rollup.select_for_update().get_or_create(
                team=summary["team"],
                scenario=summary["scenario"],
                model=summary["model"],
                day=day or NO_DAY,
            )
            for name, value in SHARE.items():
                setattr(group, name, getattr(group, name) + value)
            group.save(update_fields=list(SHARE))


class Migration(migrations.Migration):
    dependencies = [
        ("journal_store", "0047_limit_not_enforced_findings"),
    ]

    operations = [migrations.RunPython(summarize, migrations.RunPython.noop)]
