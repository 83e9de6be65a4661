"""A run's workspace: a real git repository made from a template, and the tools that work in it.

Every path an agent names is resolved inside the workspace; one that escapes it (`..`, an
absolute path, a symlink pointing out) is refused. `run_tests` shells out to pytest and reports
counts and the failure trace, with the workspace's own path and pytest's timings taken out so
the same code gives the same observation wherever and whenever it runs.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

from runtime.tools import Tool, ToolExit, ToolFailure, ToolTimeout, schema

TEMPLATES = Path(__file__).parent / "templates"
MAX_READ = 200_000
MAX_TRACE = 4_000
PYTEST_TIMEOUT = 120.0

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
}


class PathRefused(ToolFailure):
    pass


def templates() -> list[str]:
    return sorted(p.name for p in TEMPLATES.iterdir() if p.is_dir())


# --- git ---------------------------------------------------------------------------------------


def git(root: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", *args],
        cwd=root,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        timeout=60,
    )
    if proc.returncode != 0:
        raise ToolExit("git " + " ".join(args), proc.returncode, proc.stderr.strip())
    return proc.stdout.strip()


def prepare(root: Path, template: str) -> str:
    """Make `root` a fresh git repository holding `template`; returns the commit id.

    Idempotent: a half-made workspace left by a crash is wiped and made again.
    """
    source = TEMPLATES / template
    if not source.is_dir():
        raise ValueError(
            f"unknown workspace template {template!r}; known: {', '.join(templates())}"
        )
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(source, root, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"workspace from template {template}")
    return git(root, "rev-parse", "HEAD")


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


# --- the tools ---------------------------------------------------------------------------------

Writable = Callable[[str], bool]


def toolset(
    root: Path, writable: Writable | None = None, test_timeout: float = PYTEST_TIMEOUT
) -> list[Tool]:
    """The coding tools for one workspace. `writable(relative_path)` is the jurisdiction."""
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
        found = []
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in (".git", "__pycache__"))
            for name in sorted(filenames):
                found.append(relative(root, Path(dirpath) / name))
        return found

    def read_file(path: str) -> str:
        target = inside(root, path)
        if not target.is_file():
            raise FileNotFoundError(f"no file {path!r} in the workspace")
        if target.stat().st_size > MAX_READ:
            raise ToolFailure(f"{path} is larger than {MAX_READ} bytes")
        return target.read_text(encoding="utf-8")

    def write_file(path: str, content: str) -> dict[str, Any]:
        target = may_write(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return {"written": relative(root, target), "bytes": len(content.encode())}

    def edit_file(path: str, old: str, new: str) -> dict[str, Any]:
        target = may_write(path)
        if not target.is_file():
            raise FileNotFoundError(f"no file {path!r} in the workspace")
        text = target.read_text(encoding="utf-8")
        count = text.count(old)
        if count != 1:
            raise ToolFailure(
                f"the text to replace occurs {count} times in {path}; it must occur exactly once"
            )
        target.write_text(text.replace(old, new, 1), encoding="utf-8")
        return {"edited": relative(root, target)}

    def run_tests(target: str = "") -> dict[str, Any]:
        if target:
            inside(root, target.split("::")[0])
        return pytest_run(root, target, test_timeout)

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
        ),
        Tool(
            "run_tests",
            "Run the test suite (or one test path) with pytest.",
            schema({"target": {"type": "string"}}),
            run_tests,
            timeout=test_timeout + 10,
        ),
    ]


# --- pytest ------------------------------------------------------------------------------------

_TIMING = re.compile(r"\b\d+(\.\d+)?s\b")


def pytest_run(root: Path, target: str = "", timeout: float = PYTEST_TIMEOUT) -> dict[str, Any]:
    """Run pytest in the workspace as a subprocess; counts and the failure trace."""
    root = Path(root).resolve()
    with tempfile.TemporaryDirectory(prefix="minutes-pytest-") as tmp:
        report = Path(tmp) / "report.xml"
        command = [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "--tb=short",
            "-p",
            "no:cacheprovider",
            f"--rootdir={root}",
            f"--junitxml={report}",
        ]
        if target:
            command.append(target)
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_", "MINUTES_"))
        }
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        # The workspace is somebody else's repository: the plugins installed beside Minutes
        # (pytest-django, hypothesis, ...) are not its plugins. Not loading them is also 5x
        # faster per run (0.9 s -> 0.18 s here).
        env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        proc = subprocess.Popen(
            command,
            cwd=root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise ToolTimeout(f"pytest gave no answer within {timeout:g} s") from None
        code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
        if code not in (0, 1) or not report.exists():
            raise ToolExit("pytest", code, _TIMING.sub("", scrub(output, root)))
        return summarize(report, root)


def summarize(report: Path, root: Path) -> dict[str, Any]:
    tree = ET.parse(report)
    passed = failed = errors = skipped = 0
    traces = []
    for case in tree.iter("testcase"):
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
            if bad is not None:
                errors += 1
        else:
            failed += 1
        if bad is not None:
            name = f"{case.get('classname')}::{case.get('name')}"
            traces.append(f"{name}\n{bad.text or bad.get('message') or ''}".strip())
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
    result: dict[str, Any] = {"passed": passed, "failed": failed + errors}
    if skipped:
        result["skipped"] = skipped
    if traces:
        result["trace"] = scrub("\n\n".join(traces), root)[:MAX_TRACE]
    return result


def scrub(text: str, root: Path) -> str:
    """Take the workspace's own path out of pytest's output."""
    return text.replace(str(root) + os.sep, "").replace(str(root), ".")


# --- the harness's git operations (each idempotent: a crash may run it twice) -------------------


def commit_candidate(root: Path, branch: str, message: str) -> dict[str, Any]:
    """Commit the working tree on `branch` (made from the current HEAD if new); the diff against
    main, the files it touches, and the commit id."""
    if git(root, "rev-parse", "--abbrev-ref", "HEAD") != branch:
        git(root, "checkout", "-q", "-B", branch)
    git(root, "add", "-A")
    if git(root, "status", "--porcelain"):
        git(root, "commit", "-q", "-m", message)
    files = git(root, "diff", "--name-only", "main", branch).splitlines()
    return {
        "branch": branch,
        "commit": git(root, "rev-parse", "HEAD"),
        "diff": git(root, "diff", "main", branch),
        "files": files,
    }


def merge(root: Path, branch: str, message: str) -> str:
    """Merge `branch` into main (a real merge commit); returns main's new commit id."""
    head = git(root, "rev-parse", branch)
    git(root, "checkout", "-q", "main")
    already = subprocess.run(
        ["git", "merge-base", "--is-ancestor", head, "main"], cwd=root, capture_output=True
    )
    if already.returncode != 0:
        git(root, "merge", "-q", "--no-ff", "-m", message, branch)
    return git(root, "rev-parse", "main")
