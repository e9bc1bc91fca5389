"""Targets from git: ``git:REF:module:attr`` loads the target from a temporary worktree of REF.

So a pull request's parser can be compared with main's without installing both: the worktree is a
plain checkout in a temporary directory, the worker puts it first on ``sys.path``, and it is removed
when the comparison ends.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from contextlib import contextmanager
from typing import Iterator, Optional

from strategies.errors import TargetError

PREFIX = "git:"


def split_git_target(ref: str) -> Optional[tuple[str, str]]:
    """``git:REF:M:A`` -> (REF, "M:A"); None for a plain ``M:A``. REF may not contain ':'."""
    if not ref.startswith(PREFIX):
        return None
    rest = ref[len(PREFIX):]
    git_ref, sep, target = rest.partition(":")
    if not sep or not git_ref or ":" not in target:
        raise TargetError(f"{ref!r}: expected git:REF:module:callable (e.g. git:main:mypkg.parse:parse)")
    return git_ref, target


def _git(args: list[str], cwd: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        raise TargetError("git is not installed, so git:REF targets cannot be used") from None


@contextmanager
def checkout(git_ref: str, repo: Optional[str] = None) -> Iterator[str]:
    """A temporary detached worktree of ``git_ref``; yields the directory that corresponds to
    ``repo`` (the current directory by default) inside it."""
    repo = os.path.abspath(repo or os.getcwd())
    top = _git(["rev-parse", "--show-toplevel"], repo)
    if top.returncode != 0:
        raise TargetError(f"git:{git_ref}: {repo} is not inside a git repository")
    toplevel = top.stdout.strip()
    commit = _git(["rev-parse", "--verify", "--quiet", f"{git_ref}^{{commit}}"], repo)
    if commit.returncode != 0:
        raise TargetError(f"git:{git_ref}: unknown git ref {git_ref!r} in {toplevel}")
    parent = tempfile.mkdtemp(prefix="toolfuzz-git-")
    worktree = os.path.join(parent, "tree")
    added = _git(["worktree", "add", "--detach", worktree, commit.stdout.strip()], toplevel)
    if added.returncode != 0:
        shutil.rmtree(parent, ignore_errors=True)
        raise TargetError(f"git:{git_ref}: cannot create a worktree: {added.stderr.strip().splitlines()[-1:]}")
    try:
        yield os.path.join(worktree, os.path.relpath(repo, toplevel))
    finally:
        _git(["worktree", "remove", "--force", worktree], toplevel)
        shutil.rmtree(parent, ignore_errors=True)
        _git(["worktree", "prune"], toplevel)
