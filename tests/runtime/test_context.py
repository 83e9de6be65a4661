"""Context assembly: the policy, its invariant, and the two ways the window exceeds the limit."""

from __future__ import annotations

import random

from runtime.context import History, assemble, counted, marker, window_size
from runtime.model import ChatMessage


def step(n: int) -> list[ChatMessage]:
    return [ChatMessage(role="assistant", content="h" * n)]


def sizes(window):
    return [m.size() for m in window]


def test_the_worked_example_keeps_the_newest_steps_that_fit():
    # system 40, task 100, one fresh observation of 60, limit 300: 100 left for history.
    history = [step(n) for n in (80, 70, 60, 50, 40)]
    fresh = [ChatMessage(role="user", content="o" * 60)]
    window = assemble("s" * 40, "t" * 100, history, fresh, limit=300)
    # newest first: 40 fits (60 left), 50 fits (10 left), 60 does not: three steps dropped
    assert [m.content for m in window[:2]] == ["s" * 40, "t" * 100]
    assert window[2].content == "[3 earlier steps dropped to fit the window]"
    assert sizes(window[3:]) == [50, 40, 60]
    assert window_size(window) == 40 + 100 + len(window[2].content) + 50 + 40 + 60


def test_system_task_and_fresh_observations_are_always_kept():
    fresh = [ChatMessage(role="tool", content="x" * 500, tool_call_id="c1")]
    window = assemble("sys", "task", [step(10)], fresh, limit=100)
    assert window[0].content == "sys" and window[1].content == "task"
    assert window[-1] is fresh[0]


def test_steps_are_kept_or_dropped_whole():
    call_step = [
        ChatMessage(
            role="assistant",
            content="",
            tool_calls=[{"id": "c", "name": "read_file", "args": {"path": "a"}}],
        ),
        ChatMessage(role="tool", content="r" * 30, tool_call_id="c"),
    ]
    window = assemble("", "", [call_step], [], limit=call_step[0].size() + 29)
    assert all(m.role != "tool" for m in window)
    window = assemble("", "", [call_step], [], limit=call_step[0].size() + 30)
    assert [m.role for m in window[2:]] == ["assistant", "tool"]


def test_the_invariant_bounds_the_kept_history_not_the_window():
    for limit in range(0, 400, 7):
        history = [step(n) for n in (80, 70, 60, 50, 40, 5)]
        fresh = [ChatMessage(role="user", content="o" * 60)]
        window = assemble("s" * 40, "t" * 100, history, fresh, limit=limit)
        kept = [m for m in window[2:-1] if not m.content.startswith("[")]
        assert sum(m.size() for m in kept) <= max(0, limit - 40 - 100 - 60)


def test_overflow_one_the_always_kept_parts_alone_exceed_the_limit_unbounded():
    fresh = [ChatMessage(role="user", content="o" * 10_000)]
    window = assemble("s" * 40, "t" * 100, [], fresh, limit=300)
    assert window_size(window) == 10_140  # 33 times the limit, and nothing is cut


def test_overflow_two_the_marker_comes_on_top_bounded_by_its_length():
    # history budget 100 is filled exactly by the newest step; the marker adds its own length
    history = [step(30), step(100)]
    window = assemble(
        "s" * 40, "t" * 100, history, [ChatMessage(role="user", content="o" * 60)], limit=300
    )
    assert window_size(window) == 300 + len(marker(1).content)
    assert window_size(window) - 300 <= len(marker(99).content)


def test_a_measured_history_gives_the_same_window_and_counts_its_size():
    # The loop keeps its steps in a History, each measured once, and takes the window's size
    # from the count: both must agree with assembling a plain list and measuring the result.
    rng = random.Random(15)
    for _ in range(300):
        steps = [
            [ChatMessage(role="assistant", content="a" * rng.randrange(0, 90))]
            + [ChatMessage(role="tool", content="r" * rng.randrange(0, 60), tool_call_id="c")]
            * rng.randrange(0, 3)
            for _ in range(rng.randrange(0, 30))
        ]
        fresh = [ChatMessage(role="user", content="f" * rng.randrange(0, 120))]
        system, task = "s" * rng.randrange(0, 80), "t" * rng.randrange(0, 80)
        limit = rng.randrange(0, 1_500)
        plain = assemble(system, task, steps, fresh, limit)
        for history in (steps, History(steps)):
            window, chars = counted(system, task, history, fresh, limit)
            assert window == plain
            assert chars == window_size(window)


def test_a_history_measures_each_step_as_it_is_added():
    history = History([step(3), step(5)])
    history.append([*step(2), *step(4)])
    assert len(history) == 3
    assert [size for _, size in history.newest()] == [6, 5, 3]


def test_a_pruned_history_gives_every_later_window_the_same():
    # A loop lets go of the steps no later window can show (History.prune, with the room a
    # window can never exceed: the limit less the system prompt and the task). Growing a
    # history step by step, pruning at random turns, every window must be the one assembled
    # from the whole plain list, whatever the turn's fresh messages.
    rng = random.Random(16)
    for _ in range(200):
        system, task = "s" * rng.randrange(0, 80), "t" * rng.randrange(0, 80)
        limit = rng.randrange(0, 1_500)
        room = (
            limit
            - window_size([ChatMessage(role="system", content=system)])
            - window_size([ChatMessage(role="user", content=task)])
        )
        plain: list = []
        history = History()
        for _ in range(rng.randrange(0, 60)):
            made = [ChatMessage(role="assistant", content="a" * rng.randrange(0, 200))]
            plain.append(made)
            history.append(made)
            if rng.random() < 0.3:
                history.prune(room)
            fresh = [ChatMessage(role="user", content="f" * rng.randrange(0, 120))]
            assert counted(system, task, history, fresh, limit) == counted(
                system, task, plain, fresh, limit
            )
        assert len(history) == len(plain)


def test_a_pruned_history_lets_go_of_what_no_window_shows():
    history = History([step(3) for _ in range(50)])  # 50 steps of 3 characters
    history.prune(10)  # the newest three fit, the fourth stops every later walk back
    assert [len(s) for s in history.steps].count(0) == 46
    assert history.pruned == 46 and len(history) == 50


def test_a_history_behind_empty_places_is_the_one_built_step_by_step():
    """A snapshot's history is made with its empty places at once (History.behind), where
    adding them one by one cost a cold step time that grew with the run: the same history."""
    tail = [[ChatMessage(role="user", content="x" * 40)], [ChatMessage(role="user", content="y")]]
    at_once, one_by_one = History.behind(4, tail), History([[] for _ in range(4)] + tail)
    assert (at_once.steps, at_once.sizes, at_once.pruned) == (
        one_by_one.steps,
        one_by_one.sizes,
        one_by_one.pruned,
    )
    assert History.behind(0, tail).steps == tail
