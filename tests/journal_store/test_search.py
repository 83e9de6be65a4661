"""Full-text search over events, on SQLite (FTS5) and PostgreSQL (tsvector): what a person types
is words, never query syntax; the index follows the journal like every read model."""

from __future__ import annotations

import contextlib
import threading

import pytest
from django.db import connections, transaction

from journal_store import projection, search
from journal_store.journal import DjangoJournal
from journal_store.models import Checkpoint
from runtime import events as ev
from tests.journal_store.conftest import on_every_backend


def store(alias: str, run_id: str, *events: ev.Event) -> None:
    journal = DjangoJournal(alias)
    stream = f"run-{run_id}"
    journal.append(stream, list(events), journal.version(stream))


def a_run(alias: str, run_id: str, scan: str) -> None:
    r = {"run_id": run_id}
    store(
        alias,
        run_id,
        ev.TeamStarted(**r, team="support-desk", scenario="lost-update", task="cancel my order"),
        ev.ToolDispatched(
            **r, agent="clerk", tool="read_feed", call_id="c1", args={"order": "A-1"}
        ),
        ev.ToolReturned(**r, agent="clerk", tool="read_feed", call_id="c1", result=[scan]),
        ev.ModelCalled(**r, agent="clerk", turn=0, messages=3, window_chars=10),
        ev.MessageSent(
            **r,
            performative="INFORM",
            sender="clerk",
            recipient="orchestrator",
            payload={"summary": "the parcel left with the carrier"},
        ),
    )


@on_every_backend(transaction=True)
def test_a_tool_results_text_is_found_in_its_run(alias):
    a_run(alias, "r-one", "09:12 parcel handed to the carrier (scan DHL-7731)")
    a_run(alias, "r-two", "09:40 parcel handed to the carrier (scan DHL-9999)")
    projection.catch_up(using=alias)
    hits = search.search("DHL-7731", using=alias)
    assert [(h.run_id, h.kind) for h in hits] == [("r-one", "ToolReturned")]
    assert "\x02DHL" in hits[0].snippet and "7731" in hits[0].snippet
    assert "[DHL" in hits[0].bracketed  # as the API gives it
    assert search.runs_mentioning("DHL-7731", using=alias) == [("r-one", 1)]
    # Every word must occur, anywhere in the event; words are matched as written.
    assert {h.run_id for h in search.search("parcel carrier", using=alias)} == {"r-one", "r-two"}
    assert search.search("parcel DHL-9999", using=alias)[0].run_id == "r-two"
    assert search.search("parcels", using=alias) == []
    # Within one run; a message's payload; a tool's arguments; the run's task.
    assert [h.kind for h in search.search("carrier", run_id="r-two", using=alias)] == [
        "MessageSent",
        "ToolReturned",
    ]
    assert search.search("A-1", run_id="r-one", using=alias)[0].kind == "ToolDispatched"
    assert search.search("cancel", run_id="r-one", using=alias)[0].kind == "TeamStarted"


@on_every_backend(transaction=True)
def test_the_index_is_kept_incrementally_and_skips_bookkeeping(alias):
    a_run(alias, "r-one", "scan DHL-7731")
    projection.catch_up(using=alias)
    assert search.search("DHL-7731", using=alias) != []
    store(alias, "r-one", ev.AgentFinished(run_id="r-one", agent="clerk", result={"note": "zebra"}))
    assert search.search("zebra", using=alias) == []  # not applied yet
    projection.catch_up(using=alias)
    assert [h.kind for h in search.search("zebra", using=alias)] == ["AgentFinished"]
    # ModelCalled holds no prose: its kind is not indexed.
    with DjangoJournal(alias).connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT kind FROM search_event")
        assert "ModelCalled" not in {row[0] for row in cursor.fetchall()}


@pytest.mark.parametrize(
    "typed",
    ['"', "*", "DHL OR", "NEAR(a b)", "col:value", "a AND -b", "^start", "x' ; DROP TABLE y --"],
)
@on_every_backend(transaction=True)
def test_nothing_typed_is_query_syntax(alias, typed):
    a_run(alias, "r-one", "scan DHL-7731 value start")
    projection.catch_up(using=alias)
    with contextlib.suppress(search.BadQuery):  # an answer or a BadQuery, never a DB error
        search.search(typed, using=alias)
    assert search.search("DHL-7731", using=alias) != []  # and the index is untouched


def test_bad_queries_are_refused_with_what_is_wrong():
    with pytest.raises(search.BadQuery, match="type a word"):
        search.words('  " * ( ) ')
    with pytest.raises(search.BadQuery, match="at most 200 characters"):
        search.words("x" * 201)
    with pytest.raises(search.BadQuery, match="at most 12 words"):
        search.words(" ".join(["w"] * 13))


def test_a_large_tool_result_is_indexed_up_to_its_cap():
    body = search.text_of('{"result": "' + "a " * 20_000 + '"}')
    assert len(body) == search.DOC_MAX


@on_every_backend(transaction=True)
def test_a_catch_up_that_finds_the_index_held_by_another_leaves_it_whole(alias):
    """Pages catch up without waiting (wait=False): when a worker is catching the index up
    right now, its checkpoint is locked, and a page must leave the work to it. It took the
    held checkpoint for a missing one and emptied the index as if it were new, so every run
    indexed before then was never found again (on PostgreSQL; SQLite has no row locks)."""
    a_run(alias, "r-one", "09:12 parcel handed to the carrier (scan DHL-7731)")
    projection.catch_up(using=alias)
    a_run(alias, "r-two", "09:40 parcel handed to the carrier (scan DHL-9999)")
    held, release = threading.Event(), threading.Event()

    def hold_the_checkpoint() -> None:
        try:
            with transaction.atomic(using=alias):
                locked = Checkpoint.objects.using(alias).select_for_update()
                list(locked.filter(name="search"))
                held.set()
                release.wait(10)
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_the_checkpoint)
    holder.start()
    try:
        assert held.wait(10)
        projection.catch_up(["search"], using=alias, wait=False)
    finally:
        release.set()
        holder.join(10)
    projection.catch_up(using=alias)
    assert search.runs_mentioning("DHL-7731", using=alias) == [("r-one", 1)]
    assert search.runs_mentioning("DHL-9999", using=alias) == [("r-two", 1)]


def catch_up_elsewhere(alias: str) -> None:
    """Another process's catch-up of the index, to its commit."""
    if connections[alias].vendor != "postgresql":
        # SQLite's writers queue at BEGIN: no other transaction can come between a catch-up's
        # look and its write. Run inside the caller's, the other leaves what it would leave.
        projection.catch_up(["search"], using=alias)
        return

    def other() -> None:
        try:
            projection.catch_up(["search"], using=alias)
        finally:
            connections.close_all()

    thread = threading.Thread(target=other)
    thread.start()
    thread.join(30)


@on_every_backend(transaction=True)
def test_a_catch_up_that_finds_the_checkpoint_created_since_it_looked_leaves_the_index_whole(
    alias,
):
    """Two catch-ups of a fresh store's index (the web server and the workers all catch up at
    start). The first looks and finds no checkpoint; the second creates it, indexes the
    journal and commits; the first then emptied the index as if it were new, and took the
    second's checkpoint, at the journal's end: nothing before it was ever found again (on
    PostgreSQL). The second catch-up runs right after the first one's look, every time."""
    a_run(alias, "r-one", "09:12 parcel handed to the carrier (scan DHL-7731)")
    Checkpoint.objects.using(alias).filter(name="search").delete()
    connection, looked = connections[alias], []

    def after_the_first_look(execute, sql, params, many, context):
        found = execute(sql, params, many, context)
        first = not looked and connection.in_atomic_block and sql.lstrip().startswith("SELECT")
        if first and Checkpoint._meta.db_table in sql:
            looked.append(sql)
            catch_up_elsewhere(alias)
        return found

    with connection.execute_wrapper(after_the_first_look):
        projection.catch_up(["search"], using=alias)
    assert looked
    assert search.runs_mentioning("DHL-7731", using=alias) == [("r-one", 1)]
    top = DjangoJournal(alias).last_position()
    assert Checkpoint.objects.using(alias).get(name="search").position == top


@pytest.mark.parametrize("typed", ["%", "_", "% _", "...", "-/-", "%%_ *"])
def test_what_holds_no_letter_or_digit_is_refused_as_no_word_as_a_star_is(typed):
    """`%` and `_` were searched for (and found nothing, neither index keeps them) where `*` and
    `^` were refused with "type a word"."""
    with pytest.raises(search.BadQuery, match="type a word"):
        search.words(typed)


def test_a_word_keeps_its_punctuation_beside_letters_or_digits():
    assert search.words("50% snake_case %") == ["50%", "snake_case"]


@on_every_backend(transaction=True)
def test_a_text_holding_the_snippets_markers_is_marked_only_where_it_matched(alias):
    """A snippet's matched words are marked with STX and ETX: a tool's output holding them
    (a file, a terminal's) was marked where it held them too, "alpha \\x02beta \\x02gamma\\x03
    delta \\x03" highlighted "beta gamma" and bracketed "[beta [gamma] delta ]". The search's
    own markers are its alone; the text's are dropped, in what is indexed now and before."""
    a_run(alias, "r-one", "alpha \x02beta \x02gamma\x03 delta \x03 epsilon")
    projection.catch_up(using=alias)
    [hit] = search.search("gamma", using=alias)
    assert hit.snippet.endswith("\nalpha beta \x02gamma\x03 delta  epsilon")  # after the call id
    assert hit.bracketed.endswith("\nalpha beta [gamma] delta  epsilon")
    # Two words matched: each marked, and nothing else.
    [both] = search.search("alpha delta", using=alias)
    assert both.snippet.count("\x02") == both.snippet.count("\x03") == 2
    assert "\x02alpha\x03" in both.snippet and "\x02delta\x03" in both.snippet


def test_a_snippet_keeps_the_searchs_markers_and_drops_the_texts():
    opened, closed = search.markers()
    assert search.markers() != (opened, closed)  # a nonce a search
    raw = f"a\x02 {opened}b{closed} c\x03\x02 {opened}d{closed}"
    assert search.own_marks(raw, opened, closed) == "a \x02b\x03 c \x02d\x03"
    assert search.own_marks("\x03plain\x02", opened, closed) == "plain"


def steps_of(run: callable) -> int:
    """The SQLite virtual machine's instructions `run` costs: a measure of the work a query
    does that no clock's noise moves."""
    counted = [0]

    def tick() -> int:
        counted[0] += 1
        return 0

    raw = connections["default"].connection
    raw.set_progress_handler(tick, 1)
    try:
        run()
    finally:
        raw.set_progress_handler(None, 1)
    return counted[0]


@pytest.mark.django_db(transaction=True)
def test_a_search_in_one_run_costs_what_that_run_holds_not_every_runs_matches():
    """FTS5 cannot narrow by its unindexed run_id: a word every run used was read for every
    run's events, newest first, to find the few of one run (14 ms for a run of 5 events beside
    20,000 matches, 0.14 ms beside 100). The run's span of positions bounds the read."""
    a_run("default", "r-small", "09:12 parcel handed to the carrier")
    projection.catch_up()
    r = {"run_id": "r-big"}
    said = [
        ev.MessageSent(
            **r, performative="INFORM", sender="a", recipient="b", payload={"note": f"carrier {i}"}
        )
        for i in range(2_000)
    ]
    store("default", "r-big", ev.TeamStarted(**r, team="solo", scenario="", task="t"), *said[:50])
    projection.catch_up()
    few = steps_of(lambda: search.search("carrier", "r-small"))
    store("default", "r-big", *said[50:])
    projection.catch_up()
    many = steps_of(lambda: search.search("carrier", "r-small"))
    assert [h.run_id for h in search.search("carrier", "r-small")] == ["r-small"] * 2
    assert many < 2 * few, (few, many)


@on_every_backend(transaction=True)
def test_full_width_letters_and_ligatures_find_their_plain_letters_and_are_found_by_them(alias):
    """Folded with NFKC on both sides: neither index folds them, and "\uff46\uff4f\uff4f" or "ﬁle" was a word
    of its own that nobody typing "foo" or "file" found, nor the other way round."""
    a_run(alias, "r-wide", "the ﬁle \uff46\uff4f\uff4f was read")
    a_run(alias, "r-plain", "the file foo was read")
    projection.catch_up(using=alias)
    for typed in (
        "file foo",
        "ﬁle \uff46\uff4f\uff4f",
        "\uff26\uff29\uff2c\uff25",
        "FILE Foo",
        "ﬁle foo",
    ):
        found = {h.run_id for h in search.search(typed, using=alias)}
        assert found == {"r-wide", "r-plain"}, typed
        assert search.runs_mentioning(typed, using=alias) == [("r-plain", 1), ("r-wide", 1)]
    assert search.words("\uff46\uff4f\uff4f ﬁle") == ["foo", "file"]
