"""A run's workspace: a real git repository made from a template, and the tools that work in it.

Every path an agent names is resolved inside the workspace; one that escapes it (`..`, an
absolute path, a symlink pointing out) is refused. The workspace itself must resolve to a
directory directly under the workspaces root, and its template to a real directory (a team's
shipped one), before anything is deleted, created or copied (the settings were checked where
they came in; this is the second lock). `run_tests` runs pytest as agent code
(runtime/sandbox.py) and reports counts and the failure trace, with the workspace's own path
and pytest's timings taken out so the same code gives the same observation wherever and
whenever it runs.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any

from runtime import edits, flat, pytest_runs
from runtime.agent_files import (
    WorkspaceTampered,
    checked_worktree,
    opened_for_git,
    read_regular,
    refuse_nested_repositories,
    remove_tree,
    scratch,
    walk,
    write_regular,
)
from runtime.git_run import diff_of, names_kept
from runtime.git_run import git as git  # the harness's git, as callers have long imported it
from runtime.jurisdiction import OutsideJurisdiction as OutsideJurisdiction
from runtime.jurisdiction import countdown, within_jurisdiction
from runtime.sandbox import Sandbox
from runtime.tools import Call, Tool, ToolExit, ToolFailure, schema

MAX_READ = 200_000
# What one write_file or edit_file may leave in a file: what read_file reads back (a file an
# agent wrote and could not read would be one it cannot check or edit). The content also
# arrives in the call's arguments, which the journal keeps.
MAX_WRITE = MAX_READ
# The most paths list_files answers with: they reach the journal, a page and the next prompt.
MAX_LISTED = 2_000
PYTEST_TIMEOUT = 120.0
REQUIRED = Sandbox()  # the default: agent code runs in bubblewrap, or not at all

# A workspace's directory name: one path component, no separators, no leading dot.
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")


class PathRefused(ToolFailure):
    pass


class NotText(ToolFailure):
    """A file read_file or edit_file was asked for holds bytes that are not UTF-8."""


def check_name(name: str) -> str:
    """A workspace's directory name, or ValueError: one plain path component."""
    if not NAME.match(name) or ".." in name:
        raise ValueError(
            f"{name!r} is not a workspace name (one directory name: letters, digits, '_', '.', "
            "'-', not starting with a dot)"
        )
    return name


def located(workspaces: Path, name: str) -> Path:
    """The directory of workspace `name` under the workspaces root, or ValueError."""
    path = Path(workspaces) / check_name(name)
    under(Path(workspaces), path)
    return path


def under(workspaces: Path, path: Path) -> Path:
    """`path` resolved, if it lies strictly inside `workspaces` (resolved); else ValueError."""
    base, target = Path(workspaces).resolve(), Path(path).resolve()
    if target == base or base not in target.parents:
        raise ValueError(f"{str(path)!r} does not lie inside the workspaces root {str(base)!r}")
    return target


def prepare(root: Path, template: Path, workspaces: Path | None = None) -> str:
    """Make `root` a fresh git repository holding a copy of the `template` directory (a team
    resolves its template's name to one); returns the commit id.

    Idempotent: a half-made workspace left by a crash is wiped and made again. With
    `workspaces`, `root` must resolve inside it (checked before anything is touched).
    """
    if template.is_symlink() or not template.is_dir():
        raise ValueError(f"{str(template)!r} is not a template directory")
    source = template.resolve()
    if workspaces is not None:
        under(workspaces, root)
    if root.is_symlink():
        raise ValueError(f"{str(root)!r} is a symbolic link, not a workspace")
    if root.exists():
        remove_tree(root)
    shutil.copytree(source, root, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"workspace from template {template.name}")
    return git(root, "rev-parse", "HEAD")


def clone_at(
    source: Path, root: Path, branches: dict[str, str], head: str, workspaces: Path
) -> None:
    """Make `root` a repository with `source`'s commits, its branches at `branches` (name ->
    commit) and `head` checked out: a workspace as it stood at some earlier point (a fork).
    Idempotent like `prepare`: a half-made one is wiped and made again."""
    under(workspaces, root)
    if root.is_symlink():
        raise ValueError(f"{str(root)!r} is a symbolic link, not a workspace")
    if root.exists():
        remove_tree(root)
    git(workspaces, "clone", "-q", "--no-checkout", "--no-hardlinks", str(source), str(root))
    git(root, "remote", "remove", "origin")
    for name, commit in branches.items():
        git(root, "update-ref", f"refs/heads/{name}", commit)
    git(root, "symbolic-ref", "HEAD", f"refs/heads/{head}")
    git(root, "reset", "-q", "--hard")


@contextmanager
def checkout(root: Path, commit: str | None = None) -> Iterator[Path]:
    """A clean copy of the workspace's `commit` in a temporary directory, removed afterwards;
    with no commit, of its working tree as the harness's git would commit it (tracked and
    untracked files, not ignored ones). No .git in it, and the repository's own index and
    working tree are left as they were: what runs in the copy can change nothing that stays.

    Through an index of its own (read-tree, checkout-index), not `git archive`, whose
    `export-ignore` attribute would let a committed .gitattributes leave files out."""
    root = Path(root)
    with scratch("minutes-checkout-", quiet=True) as tmp:
        index, tree = tmp / "index", tmp / "tree"
        git(root, "read-tree", commit or "HEAD", index=index)
        if commit is None:  # from HEAD, so a tracked file a .gitignore names stays, as in a commit
            opened_for_git(root)  # a locked directory's files too, as the commit takes them
            refuse_nested_repositories(root)  # git add looks inside any repository it meets
            git(root, "add", "-A", index=index)
        tree.mkdir()
        git(root, "checkout-index", "-a", f"--prefix={tree}{os.sep}", index=index)
        yield tree.resolve()


# --- confinement -------------------------------------------------------------------------------


def inside(root: Path, path: str) -> Path:
    """Resolve `path` within the workspace, or refuse it."""
    if not path or "\x00" in path:
        raise PathRefused(f"{path!r} is not a usable path")
    base = root.resolve()
    target = (base / path).resolve()
    if target != base and base not in target.parents:
        raise PathRefused(f"{path!r} is outside the workspace")
    if ".git" in target.relative_to(base).parts:
        raise PathRefused(f"{path!r} is inside .git, which agents do not touch")
    return target


def relative(root: Path, target: Path) -> str:
    return target.relative_to(root.resolve()).as_posix()


def text_of(data: bytes, path: str) -> str:
    """A file's bytes as the text read_file and edit_file work on; a file in other bytes is
    refused naming the first byte that is not UTF-8, where Python's codec error said it."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotText(
            f"{path!r} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start:,})"
        ) from None


# --- the tools ---------------------------------------------------------------------------------


class TooLarge(ToolFailure):
    """What a write would leave in a file is over MAX_WRITE bytes."""


def within_limit(content: str, path: str) -> bytes:
    """`content` as the bytes to write to `path`, or TooLarge, saying the limit."""
    data = content.encode("utf-8")
    if len(data) > MAX_WRITE:
        raise TooLarge(
            f"{path} would hold {len(data)} bytes; a file written by the tools may hold at most "
            f"{MAX_WRITE} bytes (what read_file reads): nothing was written"
        )
    return data


Writable = Callable[[str], bool]


def toolset(
    root: Path,
    writable: Writable | None = None,
    test_timeout: float = PYTEST_TIMEOUT,
    sandbox: Sandbox = REQUIRED,
) -> list[Tool]:
    """The coding tools for one workspace. `writable(relative_path)` is the jurisdiction: it
    holds for the file tools and for whatever the agent's test runs change."""
    root = Path(root)

    def may_write(path: str) -> Path:
        target = inside(root, path)
        rel = relative(root, target)
        if writable is not None and not writable(rel):
            raise PathRefused(f"{rel} is outside what this agent may edit")
        return target

    def list_files(directory: str = ".") -> list[str]:
        base = inside(root, directory) if directory not in ("", ".") else root.resolve()
        if not base.is_dir():
            raise FileNotFoundError(f"no directory {directory!r} in the workspace")
        found: list[str] = []
        more = 0
        for dirpath, dirnames, filenames in walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in (".git", "__pycache__"))
            for name in sorted(filenames):
                if name == ".git" and Path(dirpath) == root.resolve():
                    continue  # a worktree's pointer to its repository, not a file of the project
                if len(found) < MAX_LISTED:
                    found.append(relative(root, Path(dirpath) / name))
                else:
                    more += 1
        if more:
            # Said in the last line, where the agent reads on: a list cut without a word
            # reads as the whole workspace.
            found.append(f"[{more:,} more files not listed: list one folder at a time]")
        return found

    def read_file(path: str) -> str:
        target = inside(root, path)
        if not target.is_file():
            raise FileNotFoundError(f"no file {path!r} in the workspace")
        return text_of(read_regular(target, MAX_READ, path), path)

    def write_file(path: str, content: str) -> dict[str, Any]:
        target = may_write(path)
        data = within_limit(content, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_regular(target, data, path)
        return {"written": relative(root, target), "bytes": len(data)}

    def edit_file(path: str, old: str, new: str, call: Call | None = None) -> dict[str, Any]:
        target = may_write(path)
        rel = relative(root, target)
        # Run again under the same call (a resumed step's), it answers as the first run did
        # (runtime/edits.py); with no call (not run by a session), nothing runs it again.
        ahead = edits.WriteAhead(root, call) if call is not None else None
        if ahead is not None and ahead.redone(rel, target, MAX_WRITE):
            return {"edited": rel}
        if not target.is_file():
            raise FileNotFoundError(f"no file {path!r} in the workspace")
        found = read_regular(target, MAX_READ, path)
        text = text_of(found, path)
        count = text.count(old)
        if count != 1:
            raise ToolFailure(
                f"the text to replace occurs {count} times in {path}; it must occur exactly once"
            )
        data = within_limit(text.replace(old, new, 1), path)
        if ahead is not None:
            ahead.keep(rel, found, data)
        write_regular(target, data, path)
        return {"edited": rel}

    def run_tests(target: str = "") -> dict[str, Any]:
        if writable is None:
            return pytest_run(root, target, test_timeout, sandbox)
        left = countdown(test_timeout)  # the snapshot's time is pytest's, not the restore's
        return within_jurisdiction(
            root, writable, lambda: pytest_run(root, target, left(), sandbox)
        )

    path_arg = {"type": "string", "description": "a path relative to the workspace root"}
    return [
        Tool(
            "list_files",
            "List the files of the workspace (or of one directory in it).",
            schema({"directory": path_arg}),
            list_files,
        ),
        Tool(
            "read_file",
            "Read a text file of the workspace.",
            schema({"path": path_arg}, ["path"]),
            read_file,
        ),
        Tool(
            "write_file",
            "Create or overwrite a text file of the workspace.",
            schema({"path": path_arg, "content": {"type": "string"}}, ["path", "content"]),
            write_file,
        ),
        Tool(
            "edit_file",
            "Replace one exact occurrence of `old` with `new` in a file.",
            schema(
                {
                    "path": path_arg,
                    "old": {"type": "string", "minLength": 1},
                    "new": {"type": "string"},
                },
                ["path", "old", "new"],
            ),
            edit_file,
            identified=True,
        ),
        Tool(
            "run_tests",
            "Run the test suite (or one test path) with pytest.",
            schema(
                {
                    "target": {
                        "type": "string",
                        "description": "a test file or directory of the workspace, optionally "
                        "with ::test_name (default: the whole suite)",
                    }
                }
            ),
            run_tests,
            timeout=test_timeout + 10,
        ),
    ]


# --- pytest ------------------------------------------------------------------------------------


def checked_target(root: Path, target: str) -> str:
    """An agent's run_tests target: a path inside the workspace (optionally ::test), never
    anything pytest would read as its own option or as a file of options."""
    path, _, _node = target.partition("::")
    if any(ord(c) < 32 for c in target):
        raise PathRefused(f"{target!r} holds control characters")
    if target[:1] in ("-", "@"):
        raise PathRefused(
            f"{target!r} is not a test path: run_tests takes a file or directory of the "
            "workspace, never options"
        )
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or ".." in pure.parts:
        raise PathRefused(f"{target!r} is not a path inside the workspace")
    inside(root, path)
    return target


def pytest_run(
    root: Path,
    target: str = "",
    timeout: float = PYTEST_TIMEOUT,
    sandbox: Sandbox = REQUIRED,
) -> dict[str, Any]:
    """Run pytest on the workspace's code as agent code (runtime/pytest_runs.py); counts and
    the failure trace."""
    root = Path(root).resolve()
    targets = [checked_target(root, target)] if target else []
    return pytest_runs.counts(pytest_runs.run(root, targets, timeout, sandbox), root)


# --- the harness's git operations (each idempotent: a crash may run it twice) -------------------


def commit_candidate(root: Path, branch: str, message: str) -> dict[str, Any]:
    """Commit the working tree on `branch` (made from the current HEAD if new); the diff against
    main, the files it touches, and the commit id."""
    if git(root, "rev-parse", "--abbrev-ref", "HEAD") != branch:
        git(root, "checkout", "-q", "-B", branch)
    opened_for_git(root)  # before the look for repositories: a locked directory hid them too
    refuse_nested_repositories(root)
    git(root, "add", "-A")
    if git(root, "status", "--porcelain", "--ignore-submodules=all"):
        git(root, "commit", "-q", "-m", message)
    files = names_kept(git(root, "diff", "--name-only", "main", branch).splitlines())
    return {
        "branch": branch,
        "commit": git(root, "rev-parse", "HEAD"),
        "diff": diff_of(root, "main", branch),
        "files": files,
    }


# --- a worktree per parallel writer (seed 02 §15) ------------------------------------------------
#
# Writers working at the same time never share a checkout: each gets a git worktree of its own,
# on its own branch, made from one base commit, beside the workspace (`<workspace>.<writer>`,
# under the same workspaces root). They share the repository's immutable history and nothing
# mutable; their work reaches main only as a merge through the mutation gate.


def writer_branch(writer: str) -> str:
    return f"writer/{check_name(writer)}"


def worktree_path(root: Path, writer: str) -> Path:
    """Where `writer`'s worktree of the workspace at `root` lives: beside it, one directory."""
    root = Path(root)
    return located(root.parent, f"{root.name}.{check_name(writer)}")


def add_worktree(root: Path, writer: str, base: str = "main") -> dict[str, Any]:
    """`writer`'s own worktree on its own branch from `base`: its directory's name beside the
    workspace (as add_checkout names it: never where the server keeps it, which a journal's
    export would carry), branch and base commit.

    One there already is kept if `git worktree add` finished it (a crash after the add, before
    its event was written, or a second call), and nothing in it changed since. Anything else is
    taken away and made again: a `git worktree add` killed half-way leaves a few files checked
    out and the rest staged as deleted, which the writer's first commit (`git add -A`) would
    have committed as its work."""
    path, branch = worktree_path(root, writer), writer_branch(writer)
    if not finished(root, path, branch):
        taken_away(root, path)
        git(root, "worktree", "add", "-q", "-B", branch, str(path), base)
    return {
        "writer": writer,
        "branch": branch,
        "base": git(root, "merge-base", branch, base),
        "path": path.name,
    }


def finished(root: Path, path: Path, branch: str) -> bool:
    """Whether the worktree at `path` is one `git worktree add` finished and nobody changed:
    git's own pointer, no lock (git locks a worktree while it makes it, "initializing"), on
    `branch`, nothing changed, staged or added."""
    if not path.is_dir() or path.is_symlink():
        return False
    try:
        entry = checked_worktree(root, path)  # before any git runs in it
    except WorkspaceTampered:
        return False
    if (entry / "locked").exists():
        return False
    try:
        head = git(path, "symbolic-ref", "-q", "HEAD")
    except ToolExit:  # detached: not on its branch
        return False
    return head == f"refs/heads/{branch}" and not git(
        path, "status", "--porcelain", "--ignore-submodules=all"
    )


def taken_away(root: Path, path: Path) -> None:
    """Nothing at `path`, and no entry of git's for it, whatever was left there: a worktree
    whole or half-made, locked, without its pointer, or a directory git never knew."""
    if path.is_dir() and not path.is_symlink():
        # By hand, not by `git worktree remove`, which refuses a worktree without its pointer
        # and would run git on what a pointer names.
        remove_tree(path)
    elif os.path.lexists(path):
        path.unlink()
    listed = git(root, "worktree", "list", "--porcelain").splitlines()
    if f"worktree {path}" in listed or f"worktree {path.resolve()}" in listed:
        # Its directory is gone now; twice forced, an entry git locked while making it goes too.
        git(root, "worktree", "remove", "--force", "--force", str(path))
    git(root, "worktree", "prune")


def commit_worktree(root: Path, writer: str, message: str) -> dict[str, Any]:
    """Commit what `writer` changed in its worktree; the branch, commit, diff against main and
    the files it touches (what a reviewer and the gate look at)."""
    path, branch = worktree_path(root, writer), writer_branch(writer)
    checked_worktree(root, path)
    opened_for_git(path)
    refuse_nested_repositories(path)
    git(path, "add", "-A")
    if git(path, "status", "--porcelain", "--ignore-submodules=all"):
        git(path, "commit", "-q", "-m", message)
    # What the writer changed since its branch left main: main may have moved on since (another
    # writer's merge), and that is not this writer's change.
    since = f"main...{branch}"
    return {
        "branch": branch,
        "commit": git(path, "rev-parse", "HEAD"),
        "diff": diff_of(root, since),
        "files": names_kept(git(root, "diff", "--name-only", since).splitlines()),
    }


def remove_worktree(root: Path, writer: str) -> None:
    """Take `writer`'s worktree away (its branch, and so its commits, stay)."""
    taken_away(root, worktree_path(root, writer))


# --- a worktree to look in, for an agent that commits nothing -----------------------------------
#
# The repo-fix tester verifies an integration in a worktree of its own at the integrated commit,
# on no branch: what it writes there (a test of its own) was never reviewed, and is taken away
# with the worktree, so it never reaches the workspace's working tree, where the next coder's
# `commit_candidate` (`git add -A`) would have swept it into that coder's candidate.


def add_checkout(root: Path, name: str, commit: str) -> dict[str, Any]:
    """`name`'s own worktree of the workspace at `root`, detached at `commit`: its directory's
    name beside the workspace (as WorkspacePrepared names the workspace: never where the server
    keeps it), and `commit` as its base (no branch). Made afresh: one left under that name (a
    crash before its event was written) is taken away first, so it holds `commit` and nothing
    else."""
    path = worktree_path(root, name)
    taken_away(root, path)  # a half-made one too: a killed add leaves its entry locked
    git(root, "worktree", "add", "-q", "--detach", str(path), commit)
    return {"writer": name, "branch": "", "base": git(path, "rev-parse", "HEAD"), "path": path.name}


def discard_checkout(root: Path, name: str) -> dict[str, Any]:
    """Take `name`'s worktree away with what no commit holds: its directory's name, and those
    paths (written, changed or deleted there), which are gone with it. Nothing to take away,
    nothing discarded (a crash after the removal, before its event was written)."""
    path = worktree_path(root, name)
    discarded: list[str] = []
    if path.exists():
        checked_worktree(root, path)
        changed = git(path, "diff", "-z", "--name-only", "HEAD")
        added = git(path, "ls-files", "-z", "--others", "--exclude-standard")
        # Names as git gives them (not UTF-8 kept as it was): mended for the event.
        names = {p for p in (changed + "\0" + added).split("\0") if p}
        discarded = names_kept(sorted(flat.mended(p) for p in names))
        remove_worktree(root, name)
    return {"writer": name, "path": path.name, "discarded": discarded}
