"""Every float an event carries is declared a moment (Instant), a length of time (Seconds) or a
figure, and each is bounded by what it is (runtime/events/times.py): a lease "expiring" at
-1e18 went in through an import that bounded only `t`, and the fold that showed it stopped every
page of the store. Readers of times stored before those bounds tolerate them
(runtime/instants.py)."""

from __future__ import annotations

import math
import typing

import pytest
from pydantic import BaseModel

from runtime import instants
from runtime.diagnose import diagnose
from runtime.events import (
    ALL_KINDS,
    LATEST_T,
    Event,
    LeaseGranted,
    RunStalled,
    TeamStarted,
    float_problem,
)
from runtime.events.times import float_fields
from runtime.fanout.restarts import clock as restarts_clock
from runtime.journal import MemoryJournal, OutOfRange, Recorded

# The floats that are neither a moment nor a length of time: a new float field that is not
# marked fails test_every_float_field_is_declared_for_what_it_is until it is marked or put here.
FIGURES = {
    ("CeilingReached", "limit"),  # tokens, turns or seconds: the ceiling says which
    ("CeilingReached", "value"),
    ("BreakerTripped", "rates"),
    ("BreakerReset", "rates"),
}
INSTANTS = {
    ("LeaseGranted", "expires"),
    ("LeaseRenewed", "expires"),
    ("DriverLeased", "expires"),
    ("LeaseTaken", "expires"),
    ("RunStalled", "since"),
}
NO_TIME = [-1e18, -1.0, LATEST_T, 1e300, math.inf, -math.inf, math.nan]
NO_LENGTH = [LATEST_T, -LATEST_T, 1e300, math.inf, math.nan]


def floats_of(cls: type[BaseModel]) -> dict[str, str]:
    return dict(float_fields(cls))


def test_every_float_field_is_declared_for_what_it_is():
    found = {
        (cls.kind, name): sort
        for cls in ALL_KINDS
        for name, sort in floats_of(cls).items()
        if name != "t"
    }
    assert {k for k, sort in found.items() if sort == "figure"} == FIGURES
    assert {k for k, sort in found.items() if sort == "instant"} == INSTANTS
    # Every kind's envelope time is one too.
    assert all(floats_of(cls)["t"] == "instant" for cls in ALL_KINDS)


def payload_pieces(annotation: object) -> set[type[BaseModel]]:
    found: set[type[BaseModel]] = set()
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        found.add(annotation)
    for arg in typing.get_args(annotation):
        found |= payload_pieces(arg)
    return found


def test_no_payload_piece_holds_a_float_the_check_would_not_see():
    # float_problem looks at an event's own fields: a piece (usage, served) with a float of
    # its own would need the walk to go into it.
    pieces = {
        piece
        for cls in ALL_KINDS
        for info in cls.model_fields.values()
        for piece in payload_pieces(info.rebuild_annotation())
    }
    assert pieces and not any(floats_of(piece) for piece in pieces)


def example(cls: type[Event], name: str, value: object) -> Event:
    """An event of the kind with `value` in field `name` and every other float a good one."""
    good = {field: 1_700_000_000.0 for field in floats_of(cls)}
    good |= {f: {"x": 1.0} for f, sort in floats_of(cls).items() if (cls.kind, f) in FIGURES}
    return cls.model_construct(**{**good, name: value})


@pytest.mark.parametrize(
    "cls, name, sort",
    [(cls, name, sort) for cls in ALL_KINDS for name, sort in float_fields(cls)],
    ids=lambda p: getattr(p, "kind", p),
)
def test_every_time_field_is_bounded(cls, name, sort):
    assert float_problem(example(cls, name, 1_700_000_000.0)) is None
    bad = {"instant": NO_TIME, "seconds": NO_LENGTH, "figure": [math.inf, math.nan]}[sort]
    for value in bad:
        figure = {"x": value} if (cls.kind, name) in FIGURES else value
        problem = float_problem(example(cls, name, figure))
        assert problem is not None and problem.startswith(f"field {name!r}: "), (value, problem)


def test_a_time_of_0_is_a_time_not_recorded_and_is_taken():
    # The reference runtime's abridged lines carry no `t`: read as 0.
    assert float_problem(LeaseGranted(t=0.0, resource="r", holder="w", expires=0.0)) is None


def test_an_append_refuses_a_time_no_clock_shows_before_writing_anything():
    journal = MemoryJournal()
    good = TeamStarted(run_id="r-a", team="solo", scenario="s", task="t")
    bomb = LeaseGranted(run_id="r-a", resource="r-a", holder="w1", expires=-1e18)
    with pytest.raises(OutOfRange, match="LeaseGranted: field 'expires': -1e\\+18 is not a time"):
        journal.append("lease-r-a", [good, bomb], 0)
    assert journal.read_all() == []


def recs(*events: tuple[str, Event]) -> list[Recorded]:
    versions: dict[str, int] = {}
    out = []
    for position, (stream, event) in enumerate(events, start=1):
        versions[stream] = versions.get(stream, 0) + 1
        out.append(Recorded(stream, versions[stream], position, event))
    return out


@pytest.mark.parametrize("bad", [-1e18, 1e300])
def test_the_stall_finding_reads_a_time_stored_before_the_bounds(bad):
    """time.gmtime raised on these, in the fold every catch-up of every page runs."""
    t = 1_700_000_000.0
    records = recs(
        ("lease-r-a", LeaseGranted(run_id="r-a", t=t, resource="r-a", holder="w1", expires=bad)),
        ("control-r-a", RunStalled(run_id="r-a", t=t + 1, since=bad, why="lease expired")),
        ("lease-r-a", LeaseGranted(run_id="r-a", t=t + 2, resource="r-a", holder="w2", expires=t)),
    )
    said = " ".join(f["summary"] for f in diagnose(records))
    assert f"t={bad!r} (not a time)" in said


def test_a_time_is_shown_as_its_number_or_put_at_an_end_of_the_range():
    assert instants.clock(0.0) == "00:00:00 UTC"
    assert restarts_clock(3723.0) == "01:02:03 UTC"
    for bad in (-1e18, 1e300, math.inf, math.nan, 10**400):
        assert "(not a time)" in instants.clock(bad)
    assert instants.moment(-1e18).year == 1970
    assert instants.moment(math.nan).year == 1970
    assert instants.moment(1e300).year == 2999
    assert instants.moment(1_700_000_000.0).year == 2023
