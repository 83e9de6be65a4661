"""The harness's git: a fixed identity and date (a flight's commit ids are the same whenever
it runs), no config of the repository's that runs programs, a diff cut to what an event may
carry, and the lock files a killed git left cleared when a step begins.

Every git runs as one of this process's children (runtime/children.py), in a process group of
its own: a holder whose lease was lost kills it (and its hooks) rather than let a merge or a
commit of its land beside the new driver's work, and the caller gets children.Ended."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import stat
import subprocess
import tempfile
import time
from json.encoder import encode_basestring
from pathlib import Path
from typing import IO, Any

from runtime import children
from runtime.tools import ToolExit

# The most of a candidate's diff its event carries (diff_of): it reaches the journal, the
# reviewer's prompt and the run's pages whole. Counted as the journal writes it, in JSON, where
# a control character is six bytes (\u0001): 200,000 bytes of them in a file an agent's test
# wrote made a CandidateCommitted line of 1.2 MB, past what an import reads (LINE_BYTES).
MAX_DIFF = 200_000
# The most of the whole change's `--stat` a cut diff ends with, and of a list of paths an event
# carries (a candidate's files, what a worktree taken away held): a test that made 40,000 files
# made each run to several megabytes.
MAX_STAT = 20_000
MAX_NAMES = 100_000

log = logging.getLogger(__name__)

TIMEOUT = 60.0  # seconds: a git that takes longer is killed, its process group with it

# How much older than the step's start a lock file must be to be taken for one a killed git
# left: a file's time is the filesystem's coarse clock, a few milliseconds behind, and a lock
# a git of this step made must never look older than the step.
LOCK_MARGIN = 1.0

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
    # A file's name or text in bytes that are not UTF-8 (an agent's test may make one) stays
    # as it is, so a name goes back to the disk whole; what reaches an event is mended first
    # (diff_of, tools.answered).
    proc = _run(root, args, env, subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise ToolExit("git " + " ".join(args), proc.returncode, proc.stderr.strip())
    said: str = proc.stdout
    return said.strip()


def _run(
    root: Path, args: tuple[str, ...], env: dict[str, str], stdout: int | IO[Any], text: bool
) -> subprocess.CompletedProcess[Any]:
    """git `args` in `root`, as one of this process's children; what it said (stdout as asked
    for: a pipe's text, or into a file) and its status. Raises children.Ended when its holder's
    lease was lost (it was killed, or not started), subprocess.TimeoutExpired after TIMEOUT."""
    command = ["git", *args]

    def start() -> subprocess.Popen[Any]:
        return subprocess.Popen(
            command,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=subprocess.PIPE,
            text=text,
            errors="surrogateescape" if text else None,
            start_new_session=True,  # a group of its own: its hooks are killed with it
        )

    with children.started(" ".join(command), start) as proc:
        try:
            out, err = proc.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    return subprocess.CompletedProcess(command, proc.returncode, out, err)


def diff_of(root: Path, *args: str) -> str:
    """`git diff args` as a candidate's event, its DONE message and the reviewer's prompt
    carry it: its first MAX_DIFF bytes, then, when there is more, a line saying so and the
    whole change's `--stat`. Written to a file, not read whole: an agent's test may have
    made a file of any size, and the diff was held in memory and written as one event."""
    env = {**os.environ, **GIT_ENV}
    with tempfile.TemporaryFile() as out:
        proc = _run(root, ("diff", *args), env, out, text=False)
        if proc.returncode != 0:
            stderr = proc.stderr.decode("utf-8", "replace").strip()
            raise ToolExit("git diff " + " ".join(args), proc.returncode, stderr)
        size = out.tell()
        out.seek(0)
        head = out.read(MAX_DIFF)
    text = head.decode("utf-8", "replace")  # a text in other bytes is shown, not refused
    if size <= MAX_DIFF and journal_bytes(text) <= MAX_DIFF:
        return text.strip()
    text = whole_lines(text, MAX_DIFF)
    stat = _mended(git(root, "diff", "--stat", *args))
    shown = whole_lines(stat + "\n", MAX_STAT)
    if shown != stat + "\n":  # cut: what git sums up at its end says the rest
        shown += "[...]\n" + _mended(git(root, "diff", "--shortstat", *args)) + "\n"
    return (
        f"{text}[the diff is cut here: {size:,} bytes in all, more than the {MAX_DIFF:,} "
        f"kept; the whole change:]\n{shown.rstrip()}"
    )


def _mended(said: str) -> str:
    # git's words in the bytes it gave them (a path that is not UTF-8), as an event holds them
    return said.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def journal_bytes(text: str) -> int:
    """The bytes `text` takes in a journal line: JSON's string, its escapes counted."""
    return len(encode_basestring(text).encode("utf-8", "surrogatepass")) - 2


def whole_lines(text: str, limit: int) -> str:
    """The first lines of `text` (each ending in a newline) that take at most `limit` bytes in
    a journal line."""
    kept, used = [], 0
    for line in text.splitlines(keepends=True):
        used += journal_bytes(line)
        if used > limit or not line.endswith("\n"):
            break
        kept.append(line)
    return "".join(kept)


def names_kept(names: list[str], limit: int = MAX_NAMES) -> list[str]:
    """`names` (paths an event lists) as far as `limit` bytes of a journal line take them; a
    last entry says how many more there were."""
    kept: list[str] = []
    used = 0
    for name in names:
        used += journal_bytes(name) + 3  # its quotes and comma
        if used > limit:
            return [*kept, f"[{len(names) - len(kept):,} more paths not listed]"]
        kept.append(name)
    return kept


def clear_stale_locks(root: Path, began: float) -> list[str]:
    """Remove the lock files in the git directory of the workspace at `root` (its writers'
    worktrees' entries included) that are older than `began`, the time.monotonic() at which
    the step began (its lease was asked for); the paths removed, relative to the .git.

    git makes `index.lock` (`HEAD.lock`, `refs/heads/x.lock`, `config.lock`, ...) for the
    time of one command and renames or removes it as it ends; a git killed in between (its
    worker killed, or its 60 s timeout) leaves it, and every git after it fails on it ("Unable
    to create '.../index.lock': File exists") however often the step is retried. A step holds
    the run's lease, so no other harness git of the run should be running; one from a driver
    whose lease lapsed may be, and its lock is newer than this step (it is kept: the step fails
    on it and is retried). Older is read on the filesystem's own clock, which stamps the lock
    files: a probe file written now says what the time is there, less the time the step has
    run, so another host's clock (workers sharing a volume) is never compared with it."""
    dot = Path(root) / ".git"
    if dot.is_symlink() or not dot.is_dir():
        return []  # no workspace yet (or a worktree: its locks are in its repository's .git)
    probe = dot / "minutes" / "clock"
    probe.parent.mkdir(parents=True, exist_ok=True)
    probe.write_bytes(b"")
    elapsed = time.monotonic() - began
    cutoff = probe.stat().st_mtime - elapsed - LOCK_MARGIN
    removed: list[str] = []
    for dirpath, dirnames, filenames in os.walk(dot):
        here = Path(dirpath)
        if here == dot / "objects":  # loose objects (objects/ab/...) are never locked
            dirnames[:] = [d for d in dirnames if d in ("info", "pack")]
        for name in filenames:
            path = here / name
            if not name.endswith(".lock"):
                continue
            info = path.lstat()
            if stat.S_ISREG(info.st_mode) and info.st_mtime < cutoff:
                path.unlink()
                removed.append(path.relative_to(dot).as_posix())
    if removed:
        # Not journalled: the journal says what the run did, and a resumed run's journal is
        # an uninterrupted one's; this is the host's housekeeping after a killed process.
        log.warning("%s: removed git lock files a killed git left: %s", root, ", ".join(removed))
    return sorted(removed)
