"""The event store and the read models projected from it.

`StoredEvent` is the journal: append-only, one row per event, unique (stream, version) as the
concurrency check and unique event id as the idempotency check. Everything else in this module
is a read model: it can be dropped and rebuilt from the events at any time.
"""

from __future__ import annotations

from datetime import timedelta

from django.db import models


class StoredEvent(models.Model):
    position = models.BigAutoField(primary_key=True)
    event_id = models.UUIDField(unique=True, db_column="id")
    stream = models.CharField(max_length=200)
    version = models.PositiveIntegerField()
    run_id = models.CharField(max_length=64)
    kind = models.CharField(max_length=64)
    v = models.PositiveSmallIntegerField()
    agent = models.CharField(max_length=64, null=True)
    task_id = models.CharField(max_length=64, null=True)
    turn = models.IntegerField(null=True)
    # The payload as JSON text, byte for byte as written: PostgreSQL's jsonb would reorder keys,
    # and an export must give back the journal that was imported.
    data = models.TextField()
    t = models.FloatField()  # the event's own timestamp, exactly as recorded
    recorded_at = models.DateTimeField()  # the same instant, for people and date queries

    class Meta:
        db_table = "journal_event"
        constraints = [
            models.UniqueConstraint(fields=["stream", "version"], name="journal_stream_version"),
        ]
        indexes = [
            models.Index(fields=["run_id", "position"], name="journal_run_position"),
            # What pages look up by kind (a run's answer, its first TeamStarted): a seek, not a
            # scan of the run's rows.
            models.Index(fields=["run_id", "kind", "position"], name="journal_run_kind"),
            # The timeline's agent filter: one seek per agent (dashboard/queries.py, distinct).
            models.Index(fields=["run_id", "agent"], name="journal_run_agent"),
            # The decisions on a subject's claims after a position (a conflict card's claims
            # settled since it was parked: Claims.settled), the rest of its claims stream not
            # read. Only those rows are in it, so no other append pays for it.
            models.Index(
                fields=["stream", "position"],
                name="journal_claims_decided",
                condition=models.Q(kind="ClaimsReconciled"),
            ),
            # A fact's last note of its live claims (Claims.live_at reads from it on, not the
            # subject's whole claims stream): a seek to the stream's last such row.
            models.Index(
                fields=["stream", "position"],
                name="journal_claims_noted",
                condition=models.Q(kind="LiveClaimsNoted"),
            ),
            # What a tool call wrote since it was dispatched, which the same call run again
            # looks for (runtime/coordination/calls.py): the gate's refusals in its log, the
            # claims on a subject. A seek to the rows after the call's dispatch, where reading
            # the stream cost its whole history; only those kinds' rows are in them.
            models.Index(
                fields=["stream", "position"],
                name="journal_refusals_since",
                condition=models.Q(kind="MutationRefused"),
            ),
            models.Index(
                fields=["stream", "position"],
                name="journal_claims_since",
                condition=models.Q(kind="ClaimAsserted"),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.stream}@{self.version} {self.kind}"


class Checkpoint(models.Model):
    """How far a projector has applied the journal (a position)."""

    name = models.CharField(max_length=64, primary_key=True)
    position = models.BigIntegerField(default=0)

    class Meta:
        db_table = "projection_checkpoint"


class StoppedView(models.Model):
    """A run one projector stopped applying (journal_store/stopped.py): the event whose fold
    raised, and the error. The projector goes on with every other run; this run's rows are
    skipped by it until a rebuild, which clears the row and tries the run again."""

    projector = models.CharField(max_length=64)
    run_id = models.CharField(max_length=64)
    position = models.BigIntegerField()
    kind = models.CharField(max_length=64)
    error = models.TextField()

    class Meta:
        db_table = "projection_stopped"
        constraints = [
            models.UniqueConstraint(fields=["projector", "run_id"], name="stopped_projector_run")
        ]
        indexes = [models.Index(fields=["run_id"], name="stopped_run")]


class RunState(models.Model):
    """One fold's state for one run (runtime.folds): what later events still need, as JSON
    text. A batch loads and writes only the folds its kinds concern; a fold still at its start
    has no row."""

    run_id = models.CharField(max_length=64)
    fold = models.CharField(max_length=64)
    state = models.TextField()

    class Meta:
        db_table = "projection_fold_state"
        constraints = [
            models.UniqueConstraint(fields=["run_id", "fold"], name="fold_state_run_fold"),
        ]


class FoldNote(models.Model):
    """A position a fold will cite later (runtime.folds.Out.note), kept as a row so that the
    fold's state stays small: written as it comes, read only when the fold asks for it."""

    run_id = models.CharField(max_length=64)
    fold = models.CharField(max_length=64)
    key = models.CharField(max_length=64)  # a digest of the fold's key (see fold_rows.digest)
    position = models.BigIntegerField()

    class Meta:
        db_table = "projection_fold_note"
        indexes = [
            models.Index(fields=["run_id", "fold", "key", "position"], name="fold_note_lookup")
        ]


class RunSummary(models.Model):
    run_id = models.CharField(max_length=64, primary_key=True)
    team = models.CharField(max_length=64, blank=True, db_index=True)
    started_by = models.CharField(max_length=150, blank=True)
    scenario = models.CharField(max_length=64, blank=True)
    task = models.TextField(blank=True)
    status = models.CharField(max_length=32)  # indexed with the run id, below
    reason = models.TextField(blank=True)
    stage = models.CharField(max_length=16)
    # What a run at stage "waiting" waits for a person to decide: "conflict", "dead letter",
    # or both ("conflict, dead letter"); empty at any other stage.
    waiting_for = models.CharField(max_length=32, blank=True, default="")
    started_at = models.DateTimeField(null=True)  # indexed with the run id, below
    finished_at = models.DateTimeField(null=True)
    # How long the run stood waiting for a person (an interrupt, a dead letter) before it
    # went on: its duration leaves it out (runtime/views.py, Summary.goes_on).
    waited = models.DurationField(default=timedelta(0))
    # Its duration once its clock has stopped (finished_at less started_at less waited: what
    # its page says), kept so that the runs list's sort by duration reads an index; None while
    # it runs (a duration that grows with the clock cannot be kept) and without a start.
    duration = models.DurationField(null=True)
    tokens = models.BigIntegerField(default=0)
    calls = models.IntegerField(default=0)
    allowance = models.BigIntegerField(null=True)
    spent = models.BigIntegerField(default=0)
    cost = models.FloatField(null=True)  # in settings.PRICES' currency; None: not known
    event_count = models.IntegerField(default=0)
    findings_count = models.IntegerField(default=0)
    last_position = models.BigIntegerField(default=0)
    resume_position = models.BigIntegerField(default=0)
    # A fork's parent run and the position of the parent's event it was forked after.
    parent_id = models.CharField(max_length=64, blank=True, db_index=True)
    fork_at = models.BigIntegerField(null=True)
    # A single-agent baseline's team run (its TeamStarted's `baseline_of`): a team run's page
    # finds its baselines by this index, where reading every run's TeamStarted was a scan of
    # the whole journal at each view and each header poll.
    baseline_of = models.CharField(max_length=64, blank=True, db_index=True)
    # The model the run asked (its default backend, or the endpoint's model name; an agent's
    # own backend aside), and the coordination metrics' figures (runtime/metrics.py), so that
    # the metrics page sums them in SQL (services/metrics.py): reading every run's fold state
    # in Python instead cost ~1 s per 10,000 runs. Names follow docs/metrics.md's detail keys.
    model = models.CharField(max_length=100, blank=True, db_index=True)
    started_on = models.DateField(null=True, db_index=True)  # started_at's day, in UTC
    verified = models.BooleanField(default=False)  # "done", not compensated: a verified success
    coord_tokens = models.BigIntegerField(default=0)
    work_tokens = models.BigIntegerField(default=0)
    overhead_ratio = models.FloatField(null=True)
    coord_seconds = models.FloatField(null=True)  # None: the journal has no times
    work_seconds = models.FloatField(null=True)
    handoffs = models.IntegerField(default=0)
    failed_handoffs = models.IntegerField(default=0)
    claims = models.IntegerField(default=0)
    contested = models.IntegerField(default=0)
    deliveries = models.IntegerField(default=0)
    stale_deliveries = models.IntegerField(default=0)
    files_written = models.IntegerField(default=0)
    shared_files = models.IntegerField(default=0)
    reviewed_tasks = models.IntegerField(default=0)
    # livelock_rate's whole: the tasks reviewed and every one that livelocked (docs/metrics.md)
    looked_at_tasks = models.IntegerField(default=0)
    livelocked_tasks = models.IntegerField(default=0)
    verifications = models.IntegerField(default=0)
    independent_verifications = models.IntegerField(default=0)
    conflicts_resolved = models.IntegerField(default=0)
    conflicts_open = models.IntegerField(default=0)
    conflict_latency = models.FloatField(null=True)  # mean seconds to a person's resolution
    human_wait = models.FloatField(default=0.0)  # seconds conflicts and dead letters waited
    dead_letters = models.IntegerField(default=0)
    letters_open = models.IntegerField(default=0)  # of those, still waiting for a person
    # When the oldest of its conflicts and dead letters still waiting for a person was opened
    # (its event's time; None: none waits). Earlier than the start in a journal whose times run
    # backwards (an imported one; a worker's clock behind the one that started the run):
    # services/metrics.py oldest_open finds such runs by the index below, where it walked every
    # open item opened before a date filter's first day to find one of the runs the filter
    # chose (0054). A fork copies no item: conflicts are parked in streams of their own, and no
    # fork starts after a dead letter of its parent's.
    waiting_since = models.DateTimeField(null=True)
    waits = models.IntegerField(default=0)  # waits for another agent: deadlock_rate's whole
    deadlocks = models.IntegerField(default=0)  # cycles of open waits among them
    # commitment_orphan_rate's whole: commitments made, or in a run that made none, requests
    # taken up; and those left open at the finish
    commitments = models.IntegerField(default=0)
    orphaned = models.IntegerField(default=0)
    # What of a fork's tokens and cost were its parent's, copied with its journal up to the
    # fork point (0 and None for a run that is no fork): the rollup leaves them out of the
    # fork's share, since the parent spent them and its own share counts them.
    inherited_tokens = models.BigIntegerField(default=0)
    inherited_cost = models.FloatField(null=True)
    inherited_coord_tokens = models.BigIntegerField(default=0)
    inherited_work_tokens = models.BigIntegerField(default=0)
    # And what its copied prefix held of every other figure the rollup sums (claims, handoffs,
    # deliveries, seconds waited...: runtime.metric_sums.SUMMED), by name; {} for a run that is no
    # fork. One JSON column, not one per figure: the rollup's shares are worked out in Python
    # (metrics_days.share), so no query sums them, and a figure added later needs no column.
    copied_figures = models.JSONField(default=dict)
    # A fork of a fork's chain above its parent, from the RunForked events its journal copied
    # (run_columns.lineage): each fork it descends through, the run that one was forked from,
    # and what its own copied prefix held; its cost by run in `lineage_cost` (the bill's fold
    # prices it, the metrics fold gives the rest). The sums across runs read them when a run
    # of the chain is not in this store, where `parent_id` alone lost the runs above it.
    lineage = models.JSONField(default=list)
    lineage_cost = models.JSONField(default=dict)

    class Meta:
        db_table = "projection_run"
        # The runs list's orders (dashboard/listing.py SORTS), each a column then the run id the
        # same way, which a page goes on after (dashboard/run_pages.py): an index of both serves
        # a page as a seek and a read of the rows it shows, wherever it is in the list, forwards
        # or backwards (newest and oldest first). With the run id in it, runs that tie on the
        # column are read in order too, where one of the column alone sorted each tie. No NULLs
        # placement: a page reads the runs without a value apart (`IS NULL`, by run id), so the
        # database's default placement serves both directions (migration 0034).
        indexes = [
            models.Index(fields=["-started_at", "-run_id"], name="run_started_id"),
            models.Index(fields=["status", "run_id"], name="run_status_id"),
            models.Index(fields=["-tokens", "-run_id"], name="run_tokens_id"),
            models.Index(fields=["-cost", "-run_id"], name="run_cost_id"),
            models.Index(fields=["-findings_count", "-run_id"], name="run_findings_id"),
            models.Index(fields=["-duration", "-run_id"], name="run_duration_id"),  # 0040
            # One person's live runs, counted at each start (services/run_cap.py): 0046
            models.Index(fields=["started_by", "status"], name="run_started_by_status"),
            # The list filtered by a status or a team, newest first (its default order): a seek
            # to the filter's runs in the page's order, where the filter's index alone gave
            # every run it selects to a sort (0053).
            models.Index(fields=["status", "-started_at", "-run_id"], name="run_status_started"),
            models.Index(fields=["team", "-started_at", "-run_id"], name="run_team_started"),
            # The runs waiting for a person, by team, scenario and model, each the time its
            # oldest item was opened: the metrics' oldest open item of a team's runs (or a
            # scenario's, a model's) starts at the least of those (0057). Partial: few wait.
            *(
                models.Index(
                    fields=[column, "waiting_since"],
                    condition=models.Q(waiting_since__isnull=False),
                    name=f"run_waiting_{column}",
                )
                for column in ("team", "scenario", "model")
            ),
            # The runs an item of which has waited since before they started (0055): few.
            models.Index(
                fields=["started_on"],
                condition=models.Q(waiting_since__lt=models.F("started_at")),
                name="run_waiting_before_start",
            ),
        ]


class MetricsDay(models.Model):
    """The runs' metric figures summed per team, scenario, model and day they started (UTC),
    kept by the runs projector beside the runs' rows (journal_store/metrics_days.py): what the
    metrics page sums. Money in millionths (`cost`), seconds in milliseconds (`conflict_wait`,
    `human_wait`); `priced` counts the runs whose cost is known, the `with_` ones the runs
    that parked a conflict or dead-lettered work. A run with no start time is on 0001-01-01."""

    team = models.CharField(max_length=64)
    scenario = models.CharField(max_length=64)
    model = models.CharField(max_length=100)
    day = models.DateField()
    runs = models.BigIntegerField(default=0)
    verified = models.BigIntegerField(default=0)
    tokens = models.BigIntegerField(default=0)
    cost = models.BigIntegerField(default=0)
    priced = models.BigIntegerField(default=0)
    coord_tokens = models.BigIntegerField(default=0)
    work_tokens = models.BigIntegerField(default=0)
    verified_coord_tokens = models.BigIntegerField(default=0)
    claims = models.BigIntegerField(default=0)
    contested = models.BigIntegerField(default=0)
    handoffs = models.BigIntegerField(default=0)
    failed_handoffs = models.BigIntegerField(default=0)
    deliveries = models.BigIntegerField(default=0)
    stale_deliveries = models.BigIntegerField(default=0)
    files_written = models.BigIntegerField(default=0)
    shared_files = models.BigIntegerField(default=0)
    reviewed_tasks = models.BigIntegerField(default=0)
    looked_at_tasks = models.BigIntegerField(default=0)
    livelocked_tasks = models.BigIntegerField(default=0)
    verifications = models.BigIntegerField(default=0)
    independent_verifications = models.BigIntegerField(default=0)
    conflicts_resolved = models.BigIntegerField(default=0)
    conflicts_open = models.BigIntegerField(default=0)
    conflict_wait = models.BigIntegerField(default=0)
    human_wait = models.BigIntegerField(default=0)
    dead_letters = models.BigIntegerField(default=0)
    letters_open = models.BigIntegerField(default=0)
    with_conflict = models.BigIntegerField(default=0)
    with_dead_letter = models.BigIntegerField(default=0)
    waits = models.BigIntegerField(default=0)
    deadlocks = models.BigIntegerField(default=0)
    commitments = models.BigIntegerField(default=0)
    orphaned = models.BigIntegerField(default=0)

    class Meta:
        db_table = "projection_metrics_day"
        constraints = [
            models.UniqueConstraint(
                fields=["team", "scenario", "model", "day"], name="metrics_day_key"
            ),
        ]


class RunTag(models.Model):
    """A tag a person put on a run (RunTagged, in the run's control stream)."""

    run_id = models.CharField(max_length=64)
    tag = models.CharField(max_length=32, db_index=True)

    class Meta:
        db_table = "projection_run_tag"
        constraints = [models.UniqueConstraint(fields=["run_id", "tag"], name="run_tag_unique")]


class BillLine(models.Model):
    """Tokens and calls of one agent on one task of one run."""

    run_id = models.CharField(max_length=64)
    agent = models.CharField(max_length=64)
    task_id = models.CharField(max_length=64)
    tokens = models.BigIntegerField()
    calls = models.IntegerField()
    prompt = models.BigIntegerField(null=True)  # None: some call reported only its total
    completion = models.BigIntegerField(null=True)
    # Of the calls, those whose usage Minutes estimated (runtime.events.Usage.estimated). 0 for
    # the lines projected before it was kept is right: no usage was marked estimated then.
    estimated = models.IntegerField(default=0)

    class Meta:
        db_table = "projection_bill"
        constraints = [
            models.UniqueConstraint(fields=["run_id", "agent", "task_id"], name="bill_line_unique"),
        ]


class ThreadMessage(models.Model):
    run_id = models.CharField(max_length=64)
    position = models.BigIntegerField()
    message_id = models.CharField(max_length=64, null=True)
    task_id = models.CharField(max_length=64)
    performative = models.CharField(max_length=16)
    sender = models.CharField(max_length=64)
    recipient = models.CharField(max_length=64)
    payload = models.JSONField(null=True)
    in_reply_to = models.CharField(max_length=64, null=True)
    delivered = models.BooleanField(default=False)

    class Meta:
        db_table = "projection_thread_message"
        indexes = [models.Index(fields=["run_id", "position"], name="thread_run_position")]


class AuditEntry(models.Model):
    run_id = models.CharField(max_length=64)
    position = models.BigIntegerField()
    what = models.CharField(max_length=64)
    who = models.CharField(max_length=150)
    task_id = models.CharField(max_length=64, null=True)
    human = models.BooleanField(default=False)
    detail = models.JSONField(default=dict)

    class Meta:
        db_table = "projection_audit"
        indexes = [models.Index(fields=["run_id", "position"], name="audit_run_position")]


class Finding(models.Model):
    run_id = models.CharField(max_length=64)
    kind = models.CharField(max_length=64, db_index=True)
    # Which finding of its kind this is, as its signature keys it (a file, a thread and
    # recipient, a position), digested: a later batch replaces or drops it by this key.
    key = models.CharField(max_length=64, default="")
    summary = models.TextField()
    positions = models.JSONField()
    first_position = models.BigIntegerField()
    detail = models.JSONField(default=dict)

    class Meta:
        db_table = "projection_finding"
        indexes = [models.Index(fields=["run_id", "first_position"], name="finding_run_position")]
        constraints = [
            models.UniqueConstraint(fields=["run_id", "kind", "key"], name="finding_run_kind_key"),
        ]


class QueueItem(models.Model):
    """An item of a review queue: opened by an event, decided once by a person (who, when,
    why); `status` is "open" until then, and the decision's outcome after. See queues.py."""

    run_id = models.CharField(max_length=64, db_index=True)
    status = models.CharField(max_length=16, default="open")  # indexed with the position, below
    decided_by = models.CharField(max_length=150, blank=True)
    decided_at = models.DateTimeField(null=True)
    decision_reason = models.TextField(blank=True)
    position = models.BigIntegerField()  # of the event that opened it: no other item's
    created_at = models.DateTimeField()

    class Meta:
        abstract = True
        # A queue is listed newest first, of one status or all, a page at a time after the
        # position of the last item shown (dashboard/api/review.py): each index a seek to the
        # page and a read of its rows, where every page sorted every item (migration 0036).
        # The open item that has waited longest (queues.oldest_open, named above a queue's
        # open items and on the metrics page) is the first of the open ones by time: a seek in
        # the third, where the open items were sorted at every page (migration 0041). One
        # run's items of a status (a queue's page filtered to a run, as a run's page links to
        # it; its oldest; the API's `run`) are a seek in the fourth: SQLite took the first or
        # the third, which give the order, and walked every item of the status until the
        # run's (migration 0056).
        indexes = [
            models.Index(fields=["status", "position"], name="%(class)s_status_position"),
            models.Index(fields=["position"], name="%(class)s_position"),
            models.Index(
                fields=["status", "created_at", "position"], name="%(class)s_status_created"
            ),
            models.Index(fields=["run_id", "status", "position"], name="%(class)s_run_status"),
        ]


class DeadLetter(QueueItem):
    """Work that could not finish, waiting for a person to retry or discard it."""

    letter_id = models.CharField(max_length=64, primary_key=True)
    task_id = models.CharField(max_length=64, null=True)
    reason = models.TextField()
    attempts = models.IntegerField(default=1)
    last_error = models.TextField(blank=True)

    class Meta(QueueItem.Meta):
        db_table = "projection_dead_letter"


class Conflict(QueueItem):
    """Two claims the rules could not reconcile, parked for a reviewer."""

    conflict_id = models.CharField(max_length=64, primary_key=True)
    subject = models.CharField(max_length=200)
    predicate = models.CharField(max_length=100)
    conflict_type = models.CharField(max_length=32)
    claims = models.JSONField()
    commit = models.JSONField(null=True)  # where a chosen value goes, from which version
    resolution = models.JSONField(null=True)

    class Meta(QueueItem.Meta):
        db_table = "projection_conflict"


class TraceFold(models.Model):
    """A run's live span fold (runtime/otel/fold_state.py) as far as live pushes took it: the
    state, the journal position it folded to (and that event's stream and version, which the
    next push checks against the journal before trusting it), and how many spans it handed
    out. A cache: dropped, or found wrong, it is rebuilt from the events."""

    run_id = models.CharField(max_length=64, primary_key=True)
    position = models.BigIntegerField()
    stream = models.CharField(max_length=200)
    version = models.PositiveIntegerField()
    spans = models.PositiveIntegerField()
    state = models.TextField()

    class Meta:
        db_table = "trace_fold_state"


class PendingPush(models.Model):
    """A traces stream whose last push of the whole trace is queued, not yet pushed or failed
    (journal_store/pending_pushes.py): what the workers have still to send."""

    stream = models.CharField(max_length=200, primary_key=True)
    run_id = models.CharField(max_length=64)
    position = models.BigIntegerField()  # the TracePushQueued's

    class Meta:
        db_table = "projection_pending_push"


class OpenEffect(models.Model):
    """An effect stream whose last record is a taking (started, or taken over), not yet an
    outcome (journal_store/open_effects.py): the effect reconciler's candidates."""

    stream = models.CharField(max_length=200, primary_key=True)
    run_id = models.CharField(max_length=64)
    position = models.BigIntegerField()  # the latest taking's

    class Meta:
        db_table = "projection_open_effect"


class LoopSnapshot(models.Model):
    """A stream's latest agent-loop snapshot (runtime/snapshots.py), encoded as the file store
    keeps it (a header with its digest, then the body), so that every worker that drives the
    run, on any host, can start a cold step from it. A cache: dropped, torn or found not to fit
    the stream, it is ignored and the run's events replayed."""

    stream = models.CharField(max_length=200, primary_key=True)
    version = models.PositiveIntegerField()  # the stream version it stands at (for people)
    data = models.BinaryField()

    class Meta:
        db_table = "loop_snapshot"


class CacheEntry(models.Model):
    """A row of Django's database cache (settings.CACHES; django.core.cache.backends.db),
    declared here so that `migrate` makes its table on SQLite and PostgreSQL alike, with nothing
    more to run on a fresh clone or a deployment, and so that a test's flush empties it. Every
    web process reads the same entries: a replay's verdict (services/verdicts.py) checked in one
    is not flown again in another, nor after a restart. The columns are the ones Django's
    `createcachetable` makes; nothing here reads the rows through this model."""

    cache_key = models.CharField(max_length=255, primary_key=True)
    value = models.TextField()
    expires = models.DateTimeField(db_index=True)

    class Meta:
        db_table = "minutes_cache"


class BeatRound(models.Model):
    """When each of the beat's rounds (services/beat.py) last ended without error, on whichever
    worker: the pages say from it whether stalled runs are being queued again at all, where a
    run that stalled with no beat anywhere only ever said "stalled since"."""

    what = models.CharField(max_length=64, primary_key=True)
    at = models.DateTimeField()

    class Meta:
        db_table = "beat_round"
