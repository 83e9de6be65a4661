"""The solo team's scripted presets, by name (the first is the team's default)."""

from __future__ import annotations

from runtime.model import call
from runtime.team import Scenario

FIX = '    fields = line.split(",")'
GUARDED = "    if not line.strip():\n        return []\n" + FIX

SOLO_FIX = Scenario(
    name="solo-fix",
    description="One coder makes the failing empty-input test pass; its first read misses.",
    task="Make the failing test pass and leave the whole suite green.",
    settings={"template": "parse-empty"},
    scripts={
        "coder": [
            call("read_file", 80, path="parser.py"),  # wrong path: an error observation
            call("list_files", 60),
            call("read_file", 90, path="textparse/parser.py"),
            call("run_tests", 70),
            call("edit_file", 120, path="textparse/parser.py", old=FIX, new=GUARDED),
            call("run_tests", 60),
            call("done", 40, summary="parse('') now returns []; the suite is green"),
        ]
    },
)


SCENARIOS = {s.name: s for s in (SOLO_FIX,)}
