"""The harness's git: a fixed identity and date (a flight's commit ids are the same whenever
it runs), no config of the repository's that runs programs, and a diff cut to what an event
may carry."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from runtime.tools import ToolExit

# The most of a candidate's diff its event carries (diff_of): it reaches the journal, the
# reviewer's prompt and the run's pages whole.
MAX_DIFF = 200_000

# Commits made by the harness carry a fixed date, so a flight's commit ids are the same
# whenever it runs: the journal records when things happened; git records what.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Minutes",
    "GIT_AUTHOR_EMAIL": "harness@minutes.invalid",
    "GIT_COMMITTER_NAME": "Minutes",
    "GIT_COMMITTER_EMAIL": "harness@minutes.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    # What a repository's own config could make git run, switched off for the harness's git
    # (agent_files.py says why it cannot rely on this alone).
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "core.fsmonitor",
    "GIT_CONFIG_VALUE_0": "false",
}


def git(root: Path, *args: str, index: Path | None = None) -> str:
    """Run git in `root` (with `index` as its index file instead of the repository's own)."""
    env = {**os.environ, **GIT_ENV, **({"GIT_INDEX_FILE": str(index)} if index else {})}
    proc = subprocess.run(
        ["git", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        # A file's name or text in bytes that are not UTF-8 (an agent's test may make one)
        # stays as it is, so a name goes back to the disk whole; what reaches an event is
        # mended first (diff_of, tools.answered).
        errors="surrogateescape",
        timeout=60,
    )
    if proc.returncode != 0:
        raise ToolExit("git " + " ".join(args), proc.returncode, proc.stderr.strip())
    return proc.stdout.strip()


def diff_of(root: Path, *args: str) -> str:
    """`git diff args` as a candidate's event, its DONE message and the reviewer's prompt
    carry it: its first MAX_DIFF bytes, then, when there is more, a line saying so and the
    whole change's `--stat`. Written to a file, not read whole: an agent's test may have
    made a file of any size, and the diff was held in memory and written as one event."""
    env = {**os.environ, **GIT_ENV}
    with tempfile.TemporaryFile() as out:
        proc = subprocess.run(
            ["git", "diff", *args],
            cwd=root,
            env=env,
            stdout=out,
            stderr=subprocess.PIPE,
            timeout=60,
        )
        if proc.returncode != 0:
            stderr = proc.stderr.decode("utf-8", "replace").strip()
            raise ToolExit("git diff " + " ".join(args), proc.returncode, stderr)
        size = out.tell()
        out.seek(0)
        head = out.read(MAX_DIFF)
    text = head.decode("utf-8", "replace")  # a text in other bytes is shown, not refused
    if size <= MAX_DIFF:
        return text.strip()
    text = text[: text.rfind("\n") + 1]  # whole lines only
    stat = git(root, "diff", "--stat", *args).encode("utf-8", "surrogateescape")
    return (
        f"{text}[the diff is cut here: {size:,} bytes in all, more than the {MAX_DIFF:,} "
        f"kept; the whole change:]\n{stat.decode('utf-8', 'replace')}"
    )
