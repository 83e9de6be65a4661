"""The runs list's Search and a review queue's words find a text in any case in every
alphabet on SQLite, the embedded default (journal_store/anycase.py): SQLite's LIKE folds ASCII
letters only, so "émile" did not find "Émile" though the trigram index had named its run. Each
path of a search is read: a rare text looked up by its runs' ids, a common one read in the
list's order, a text too short for a trigram, and the poll's mark and count. Expected runs are
written out here, not asked of the match the code uses. Case is folded as the index folds it
(FTS5's simple case folding), so that every path finds the same runs."""

from __future__ import annotations

import random
import sqlite3
import sys
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from dashboard import listing, queries, run_pages
from journal_store import anycase, queues, substrings
from journal_store.models import DeadLetter, RunSummary

START = datetime(2026, 12, 1, tzinfo=UTC)
TASKS = {
    "r-one": "Ask Émile about the café",
    "r-two": "émile said so",
    "r-three": "ПРИВЕТ мир: a greeting",
    "r-four": "Σίσυφος rolls the stone",
    "r-five": "é_x is literal",
    "r-six": "emile without an accent",
    "r-seven": "ΟΔΟΣΗΜΑΝΣΗ by ᲐᲜᲐ",
}
FOUND = [
    ("émile", {"r-one", "r-two"}),
    ("ÉMILE", {"r-one", "r-two"}),
    ("CAFÉ", {"r-one"}),
    ("привет", {"r-three"}),
    ("Мир", {"r-three"}),
    ("ΣΊΣΥΦΟΣ", {"r-four"}),
    ("é_", {"r-five"}),  # "_" is the character, not LIKE's any-one
    ("é%", set()),
    ("ЙЙЙ", set()),
    ("é", {"r-one", "r-two", "r-five"}),  # too short for a trigram
    ("ÉM", {"r-one", "r-two"}),
    ("R-ON", {"r-one"}),  # an id, ASCII: the LIKE
    ("emile", {"r-six"}),  # an accent is a letter of its own, as before
    # Python's lower made the last Σ a final ς: "ος" is not in "οδοσημανση".
    ("ΟΣ", {"r-four", "r-seven"}),
    ("οδος", {"r-seven"}),
    ("ΣΗ", {"r-seven"}),
    # A case FTS5's tables lack (Georgian Mtavruli, Unicode 11) is not folded on any path:
    # Python's lower folded it when a walk read the runs, and the index never named them.
    ("ანა", set()),
    ("ᲐᲜᲐ", {"r-seven"}),
]


def store(many: int = 0) -> None:
    """The runs above, a minute apart, and `many` more holding "common"."""
    stored([*TASKS.items(), *((f"r-common-{n:04d}", f"common task {n}") for n in range(many))])


def stored(tasks: list[tuple[str, str]], using: str = "default") -> None:
    """Runs of these ids and tasks, done, each a minute after the one before, from START."""
    RunSummary.objects.using(using).bulk_create(
        RunSummary(
            run_id=run_id,
            task=task,
            status="done",
            stage="complete",
            started_at=START + timedelta(minutes=n),
        )
        for n, (run_id, task) in enumerate(tasks)
    )


def listed(chosen: listing.RunFilter) -> set[str]:
    chose = listing.selection(chosen, fewer_than=listing.PAGE_FEW)
    page = run_pages.page(chose.runs, "started", None, 50, chose.walk)
    assert page.next is None
    return {r.run_id for r in page.runs}


@pytest.mark.django_db
@pytest.mark.parametrize("few", [1, substrings.FEW])
def test_the_runs_list_finds_a_text_in_any_case_in_every_alphabet(few, monkeypatch):
    """`few` 1: every text is common (read in the list's order); FEW: each is rare (looked
    up by the ids the index names)."""
    monkeypatch.setattr(substrings, "FEW", few)
    monkeypatch.setattr(listing, "PAGE_FEW", few)
    store()
    for q, want in FOUND:
        chosen = listing.RunFilter(q=q)
        assert listed(chosen) == want, q
        newest = max((START + timedelta(minutes=list(TASKS).index(r)) for r in want), default=None)
        assert run_pages.newest_start(chosen) == newest, q
        assert run_pages.started_since(chosen, START - timedelta(minutes=1)) == len(want), q


@pytest.mark.django_db
def test_the_api_finds_a_text_in_any_case(client, django_user_model):
    store(many=3)
    client.force_login(django_user_model.objects.create_user("ann", password="x"))
    answer = client.get("/api/runs", {"q": "ÉMILE"})
    assert answer.status_code == 200, answer.content
    assert {r["run_id"] for r in answer.json()["items"]} == {"r-one", "r-two"}


def letters(tasks: dict[str, str], using: str = "default", errors: bool = False) -> None:
    """An open dead letter of each run, its task the reason (and with `errors`, every other
    one's last error too)."""
    DeadLetter.objects.using(using).bulk_create(
        DeadLetter(
            letter_id=f"{run_id}:1",
            run_id=run_id,
            status="open",
            position=n + 1,
            created_at=START + timedelta(minutes=n),
            reason=task,
            last_error=f"ValueError: {task}" if errors and n % 2 == 0 else "",
        )
        for n, (run_id, task) in enumerate(tasks.items())
    )


@pytest.mark.django_db
def test_a_queues_words_find_a_reason_in_any_case():
    letters(TASKS)
    for q, want in FOUND:
        shown = queries.queue_items(queues.DEAD_LETTERS, "all", words=q)
        assert {letter.run_id for letter in shown} == want, q


@pytest.mark.django_db
def test_an_ascii_text_keeps_sqlites_like():
    """Only a text beyond ASCII calls back into Python, and only for the rows its shape's LIKE
    lets through."""
    ascii_only = str(RunSummary.objects.filter(substrings.RUNS.matched(["emile"])).query)
    accented = str(RunSummary.objects.filter(substrings.RUNS.matched(["émile"])).query)
    assert "LIKE" in ascii_only and anycase.FUNCTION not in ascii_only
    assert "LIKE %_mile% ESCAPE" in accented and f"{anycase.FUNCTION}(" in accented


# Every code point a text can hold: no surrogate, nor a NUL, which ends a text for FTS5 and
# which every way in refuses (PostgreSQL's text has none).
POINTS = [c for c in range(1, sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF]


def test_the_fold_is_fts5s_for_every_code_point_it_could_fold():
    """What the match's exactness rests on: FTS5 folds the code points below FOLDED_BELOW and
    Deseret's (its tokenizer's source), each as the fold does, asked of FTS5 for every one."""
    asked = [c for c in POINTS if c < anycase.FOLDED_BELOW or c in anycase.DESERET]
    assert anycase.fts5_folds(asked) == {c: anycase.folds().get(c, c) for c in asked}
    # Beyond them, FTS5 folds nothing: the letters Python gives a case, asked too.
    cased = [
        c
        for c in POINTS
        if c >= anycase.FOLDED_BELOW
        and c not in anycase.DESERET
        and (chr(c).lower() != chr(c) or chr(c).upper() != chr(c))
    ]
    assert len(cased) > 100 and anycase.fts5_folds(cased) == {c: c for c in cased}


def test_the_fold_of_each_code_point_is_one_letter_as_the_table_has_it():
    """`fold` takes `lower`'s quick way but for the letters it folds otherwise: every code
    point folded alone and between letters (Σ's lower case is taken from its neighbours)."""
    table = anycase.folds()
    # From LOWERED_BELOW on, `lower` changes nothing (below) and FTS5 nothing (above).
    assert all(chr(c).lower() == chr(c) for c in POINTS if c >= anycase.LOWERED_BELOW)
    assert max(table) < anycase.LOWERED_BELOW
    for c in (c for c in POINTS if c < anycase.LOWERED_BELOW):
        assert anycase.fold(chr(c)) == chr(table.get(c, c)), hex(c)
        assert anycase.fold(f"a{chr(c)} ") == f"a{chr(table.get(c, c))} ", hex(c)
    assert anycase.fold("ΟΔΟΣ ΟΣΑ") == "\u03bf\u03b4\u03bf\u03c3 \u03bf\u03c3\u03b1"


def test_no_letter_beyond_ascii_folds_to_ascii_but_the_loose_ones():
    beyond = {chr(f) for c, f in anycase.folds().items() if c > 127 and f < 128}
    assert beyond == {"s", "k"}  # the long s, the Kelvin sign
    assert anycase.loose() == {"s", "S", "k", "K"}
    assert all(f < 128 for c, f in anycase.folds().items() if c < 128)  # A-Z


def test_a_shape_lets_through_every_row_the_function_accepts():
    """Rows and texts of letters whose cases are odd (final sigma, the Kelvin sign, dotted and
    dotless i, sharp s) and LIKE's own characters: whatever the function finds, SQLite's LIKE
    of the text's shape lets through."""
    letters = "aiIkKsSzZ%_\\ éÉßẞσςΣıİ\u212a\u017føØжᲀвაᲐ"
    rng = random.Random(7)
    like = sqlite3.connect(":memory:")
    for _ in range(20_000):
        row = "".join(rng.choice(letters) for _ in range(rng.randrange(0, 9)))
        text = "".join(rng.choice(letters) for _ in range(rng.randrange(1, 4)))
        if anycase.holds(row, text):
            (shaped,) = like.execute(
                "SELECT ? LIKE ? ESCAPE '\\'", (row, anycase.shape(text))
            ).fetchone()
            assert shaped == 1, (row, text)


def test_the_function_folds_each_side_as_the_index_does():
    assert anycase.holds("Ask ÉMILE", "émile") and anycase.holds("ß", "ẞ")
    assert anycase.holds("ΟΣΑ", "ΟΣ") and anycase.holds("οδος", "ΟΔΟΣ")
    assert anycase.holds("\u017ftaté", "STATÉ") and not anycase.holds("ᲐᲜᲐ", "ანა")
    assert not anycase.holds("emile", "émile") and not anycase.holds("İstanbul", "istanbul")
    assert anycase.holds(None, "x") is None and anycase.holds("x", None) is None


@pytest.mark.django_db
def test_each_path_of_a_search_finds_the_rows_the_match_alone_finds():
    """Rows and texts of letters whose cases are odd, looked up in the index (`few`: its rows
    or its trigrams' range) and matched alone, as a walk of the list reads them."""
    odd = "aiIsSkK éÉßẞσςΣıİ\u212a\u017fᲀвაᲐ\U00010400\U00010428"
    rng = random.Random(11)
    rows = ["".join(rng.choice(odd) for _ in range(rng.randrange(0, 7))) for _ in range(300)]
    stored([(f"r-{n:03d}", row) for n, row in enumerate(rows)])
    runs = RunSummary.objects
    for _ in range(400):
        text = "".join(rng.choice(odd) for _ in range(rng.randrange(1, 4)))
        if not text.strip():
            continue
        alone = {
            r for r in runs.filter(substrings.RUNS.matched([text])).values_list("run_id", flat=True)
        }
        named = substrings.RUNS.few([text], "sqlite", fewer_than=len(rows) + 1)
        assert named is not None and alone <= set(named), (text, alone - set(named or ()))


@pytest.mark.django_db
def test_every_sqlite_connection_has_the_function():
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {anycase.FUNCTION}(%s, %s)", ["ПРИВЕТ", "привет"])
        assert cursor.fetchone() == (1,)
