"""The table of teams and scenarios in docs/teams.md, made from the scenarios' own definitions.

Each row is a scenario's one-line `description`: the words the dashboard's new-run form and
`python -m runtime fly --help` show too, so the three cannot disagree. The table sits in
docs/teams.md (TARGET) between two markers; `python -m runtime.scenario_table --write
docs/teams.md` rewrites it there, and a test fails while that copy and the definitions differ.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from runtime import plugins

# Where the table lives, from the repository's root: the README held it until its reference
# sections moved into docs/, and the marker names the command that writes it there.
TARGET = "docs/teams.md"
BEGIN = (
    "<!-- scenarios: made from each scenario's description by "
    f"`python -m runtime.scenario_table --write {TARGET}`; edit the descriptions, not this -->"
)
END = "<!-- /scenarios -->"


class TableMissing(Exception):
    """The file has no place marked for the table."""


def cell(text: str) -> str:
    """Text as one Markdown table cell: its pipes escaped, its lines joined."""
    return " ".join(text.split()).replace("|", "\\|")


def table() -> str:
    """Every installed team's scenarios, in the teams' and their scenarios' own order."""
    rows = ["| team | scenario | what happens |", "|---|---|---|"]
    for name, team in plugins.teams().items():
        for scenario_name, scenario in team.scenarios.items():
            rows.append(f"| `{name}` | `{scenario_name}` | {cell(scenario.description)} |")
    return "\n".join(rows)


def block() -> str:
    return f"{BEGIN}\n{table()}\n{END}"


def current(text: str) -> str:
    """The table block as the text holds it (TableMissing when it holds none)."""
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise TableMissing(f"no scenario table marked by {BEGIN!r} ... {END!r}")
    return text[start : end + len(END)]


def rewritten(text: str) -> str:
    """The text with its table block made again from the definitions."""
    return text.replace(current(text), block(), 1)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runtime.scenario_table", description=__doc__)
    parser.add_argument("--write", type=Path, help=f"rewrite the table in this file ({TARGET})")
    args = parser.parse_args(argv)
    if args.write is None:
        print(table())
        return 0
    text = args.write.read_text(encoding="utf-8")
    try:
        new = rewritten(text)
    except TableMissing as exc:
        print(f"{args.write}: {exc}", file=sys.stderr)
        return 1
    if new == text:
        print(f"{args.write}: the scenario table is current")
    else:
        args.write.write_text(new, encoding="utf-8")
        print(f"{args.write}: the scenario table was written again")
    return 0


if __name__ == "__main__":
    sys.exit(main())
