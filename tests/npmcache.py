"""Pinned npm packages for the tests, installed once per machine into a cache folder.

A set of pinned packages is installed with ``npm install --prefix`` into
``$XDG_CACHE_HOME`` (or ``~/.cache``) ``/jupyter-copilot-tests/npm-<kind>-<hash>``, where
``<hash>`` names the pinned versions; a lock file keeps parallel runs from colliding and the
install goes to a temporary sibling that is renamed into place only when it succeeded.
Without ``npm`` the tests that need the packages skip, except on CI, where they fail.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

INSTALL_TIMEOUT = 900


def unavailable(message: str) -> NoReturn:
    """Fail on CI (a missing tool there is a broken machine), skip elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def versions_hash(packages: dict[str, str]) -> str:
    """A short hash of the pinned ``package@version`` list (names the install directory)."""
    spec = "\n".join(f"{name}@{version}" for name, version in sorted(packages.items()))
    return hashlib.sha256(spec.encode()).hexdigest()[:12]


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/jupyter-copilot-tests`` (or ``~/.cache/...``)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "jupyter-copilot-tests"


def install_dir(kind: str, packages: dict[str, str], override_env: str | None = None) -> Path:
    """Where the pinned packages live: ``<cache>/npm-<kind>-<hash>``, or ``$override_env``."""
    if override_env and os.environ.get(override_env):
        return Path(os.environ[override_env])
    return cache_root() / f"npm-{kind}-{versions_hash(packages)}"


def complete(directory: Path, packages: dict[str, str]) -> bool:
    """Whether every package is installed at its pinned version in ``directory``."""
    for name, version in packages.items():
        manifest = directory / "node_modules" / name / "package.json"
        try:
            if json.loads(manifest.read_text(encoding="utf-8")).get("version") != version:
                return False
        except (OSError, ValueError):
            return False
    return True


def npm_executable() -> str | None:
    """``npm`` on ``PATH`` (with ``node`` next to it), or None."""
    npm = shutil.which("npm")
    return npm if npm and shutil.which("node") else None


@contextlib.contextmanager
def install_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing): one installer at a time, across
    test processes (pytest-xdist's workers, or two runs on one machine)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def install_pinned(
    kind: str, packages: dict[str, str], what: str, override_env: str | None = None
) -> Path:
    """Install the pinned npm ``packages`` once per machine; return the ``--prefix`` directory.

    ``what`` names them in messages ("the real ACP agents"). ``override_env`` names a
    variable that may point at a directory that already holds them (no install then).
    Skips (fails on CI) without ``npm``; fails when the install itself fails.
    """
    target = install_dir(kind, packages, override_env)
    if complete(target, packages):
        return target
    if override_env and os.environ.get(override_env):
        pytest.fail(f"${override_env}={target} lacks some of {sorted(packages)}", pytrace=False)
    npm = npm_executable()
    if npm is None:
        unavailable(
            f"Installing {what} ({', '.join(f'{n}@{v}' for n, v in sorted(packages.items()))}) "
            "needs Node.js and npm on PATH (node 20 or newer)."
        )
    with install_lock(target.parent / f".{target.name}.lock"):
        if complete(target, packages):  # another process finished while we waited
            return target
        started = time.monotonic()
        build = Path(tempfile.mkdtemp(prefix=f".{target.name}-build-", dir=target.parent))
        try:
            done = subprocess.run(
                [
                    npm,
                    "install",
                    "--prefix",
                    str(build),
                    "--no-audit",
                    "--no-fund",
                    "--loglevel=error",
                    *(f"{name}@{version}" for name, version in sorted(packages.items())),
                ],
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
                check=False,
            )
            if done.returncode != 0 or not complete(build, packages):
                pytest.fail(
                    f"npm could not install {what}:\n" + (done.stdout + done.stderr)[-4000:],
                    pytrace=False,
                )
            if target.exists():
                shutil.rmtree(target)
            build.rename(target)
        finally:
            shutil.rmtree(build, ignore_errors=True)
        seconds = time.monotonic() - started
        print(f"installed {what} in {target} in {seconds:.0f} s", file=sys.stderr)
    return target


def bin_command(directory: Path, command: str) -> list[str]:
    """The argv that runs ``node_modules/.bin/<command>`` of ``directory``.

    A JavaScript bin (by its suffix or its ``node`` shebang) is run through ``node``
    directly: its shebang would need ``node`` on the child's own ``PATH``.
    """
    script = directory / "node_modules" / ".bin" / command
    if not script.exists():
        pytest.fail(f"{script} is missing", pytrace=False)
    target = script.resolve()
    node = shutil.which("node")
    with target.open("rb") as handle:
        shebang = handle.readline()
    javascript = target.suffix in (".js", ".mjs", ".cjs") or (
        shebang.startswith(b"#!") and b"node" in shebang
    )
    if javascript and node:
        return [node, str(target)]
    return [str(target)]
