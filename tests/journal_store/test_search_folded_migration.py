"""Migration 0043 folds the search documents stored before it (journal_store/search.py
`folded`) as the projector now writes them: the index it leaves is the one a rebuild gives,
a document cut at DOC_MAX read again from its event; run again, it writes nothing."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from journal_store import projection, search
from runtime import events as ev
from runtime.events import payload_json
from tests.journal_store.test_projection import search_rows
from tests.journal_store.test_search import a_run, store

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("journal_store", "0041_queue_oldest_open")]
FOLD = importlib.import_module("journal_store.migrations.0043_search_folded")


def unfolded_index(monkeypatch) -> None:
    """The index as the projector wrote it before 0043: the text as the events hold it."""
    with monkeypatch.context() as patched:
        patched.setattr(search, "folded", lambda text: text)
        projection.rebuild(["search"])


def stored(monkeypatch) -> list:
    a_run("default", "r-wide", "the ﬁle \uff46\uff4f\uff4f was read")
    a_run("default", "r-plain", "the file foo was read")
    # A document cut at DOC_MAX with a ligature at the cut: folded first, the cut falls
    # elsewhere. And a long one under DOC_MAX that folding makes longer than it.
    r = {"run_id": "r-long", "agent": "clerk", "tool": "read_file", "call_id": "c1"}
    # "e" and a combining acute across the cut: "é" folded whole, "e" folded once cut.
    ahead = search.text_of(payload_json(ev.ToolReturned(**r, result=["x"]))).index("x")
    across = "x" * (search.DOC_MAX - 1 - ahead) + "e\u0301" + "tail"
    store(
        "default",
        "r-long",
        ev.ToolDispatched(**r, args={"path": "a.txt"}),
        ev.ToolReturned(**r, result=[across]),
        ev.ToolReturned(**r, result=["\uff59" * 100 + "ﬃ" * 7000]),
    )
    projection.catch_up()
    return search_rows("default")


def test_0043_folds_the_stored_documents_as_a_rebuild_would(monkeypatch):
    rebuilt = stored(monkeypatch)
    unfolded_index(monkeypatch)
    before = search_rows("default")
    assert before != rebuilt and any("\uff46\uff4f\uff4f" in row[3] for row in before)
    assert {h.run_id for h in search.search("foo")} == {"r-plain"}
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert search_rows("default") == rebuilt
    assert {h.run_id for h in search.search("foo")} == {"r-wide", "r-plain"}
    assert {h.run_id for h in search.search("\uff46\uff4f\uff4f")} == {"r-wide", "r-plain"}


def test_0043_run_again_or_in_small_batches_writes_the_same(monkeypatch):
    rebuilt = stored(monkeypatch)
    unfolded_index(monkeypatch)
    editor = SimpleNamespace(connection=connection)
    monkeypatch.setattr(FOLD, "BATCH", 2)  # a batch at a time, each committed
    FOLD.fold(None, editor)
    assert search_rows("default") == rebuilt
    # Run again (as after an interruption): every document is folded, nothing is written.
    written: list[str] = []

    def watched(execute, sql, params, many, context):
        if sql.lstrip().upper().startswith("UPDATE"):
            written.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(watched):
        FOLD.fold(None, editor)
    assert written == [] and search_rows("default") == rebuilt
