"""The documentation's commands, run exactly as written, where they cannot harm the machine.

A guide's commands write real system locations (``--system`` is ``/usr/local/etc/jupyter``,
skills go to ``/usr/local/share/jupyter``, ``--sys-prefix`` is this environment's
``etc/jupyter``). `Sandbox` runs them in a private mount namespace in which those folders are
overlays whose writes land in the test's tmp dir: the commands and a real ``jupyter server``
see the same files, and nothing outside the namespace changes. It needs root (as in CI);
elsewhere the tests that use it skip with a message.

Every command and server joins the namespace of one holder process with ``nsenter``, so a
file one command writes is what the next command and the server read.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.eventually import eventually_blocking

OVERLAID = ("/usr/local/etc", "/usr/local/share", f"{sys.prefix}/etc/jupyter")


def require_namespaces() -> None:
    """Skip with a clear message when mount namespaces are not available, except in CI."""
    missing = [t for t in ("unshare", "nsenter", "curl") if shutil.which(t) is None]
    reason = None
    if os.geteuid() != 0:
        reason = "needs root for a private mount namespace"
    elif missing:
        reason = f"needs {', '.join(missing)}"
    if reason is None:
        return
    message = f"The documentation's system-wide commands run in a sandbox that {reason}."
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Sandbox:
    """A private view of the system's Jupyter folders, with a server that can run in it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.token = secrets.token_hex(16)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.cwd = root / "cwd"
        self.cwd.mkdir()
        home = root / "home"
        self.env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
            "JUPYTER_DATA_DIR": str(home / ".local/share/jupyter"),
            "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
            "JUPYTER_TOKEN": self.token,
            "JUPYTER_URL": self.url,
            "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        }
        self.env.pop("JUPYTER_PLATFORM_DIRS", None)
        self.server: subprocess.Popen[bytes] | None = None
        self.server_log = root / "server.log"
        mounts = []
        for i, folder in enumerate(OVERLAID):
            upper, work = root / f"upper{i}", root / f"work{i}"
            upper.mkdir()
            work.mkdir()
            mounts.append(
                f"mount -t overlay overlay -o lowerdir={folder},upperdir={upper},"
                f"workdir={work} {folder}"
            )
        ready = root / "ready"
        script = " && ".join([*mounts, f"touch {ready}", "exec sleep 3600"])
        self.holder = subprocess.Popen(
            ["unshare", "--mount", "--propagation", "private", "bash", "-c", script]
        )
        holder = self.holder

        def started() -> bool:
            if holder.poll() is not None:
                raise RuntimeError("the sandbox's mount namespace did not start")
            return ready.exists()

        eventually_blocking(started, "the sandbox's mount namespace", 10)

    def _enter(self, argv: list[str]) -> list[str]:
        return ["nsenter", "--target", str(self.holder.pid), "--mount", "--", *argv]

    def run(self, command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run one shell command in the sandbox, from its working directory."""
        done = subprocess.run(
            # nsenter does not keep the working directory; the command starts from ours.
            self._enter(["bash", "-c", f"cd {shlex.quote(str(self.cwd))} && {command}"]),
            cwd=self.cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"{command!r} failed ({done.returncode}):\n{done.stderr}")
        return done

    def start_server(self) -> None:
        """Start ``jupyter server`` in the sandbox and wait until its status answers."""
        self.stop_server()
        log = open(self.server_log, "wb")  # noqa: SIM115 (the server writes it until stopped)
        self.server = subprocess.Popen(
            self._enter(
                [
                    sys.executable,
                    "-m",
                    "jupyter_server",
                    "--no-browser",
                    "--allow-root",
                    f"--port={self.port}",
                    "--ip=127.0.0.1",
                    f"--ServerApp.root_dir={self.cwd}",
                ]
            ),
            cwd=self.cwd,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        server = self.server

        def answers() -> dict[str, Any]:
            if server.poll() is not None:
                raise RuntimeError(
                    f"the sandbox server did not start:\n{self.server_log.read_text()}"
                )
            return self.status()

        eventually_blocking(
            answers,
            "the sandbox server to answer",
            60,
            interval=0.2,
            ignoring=(urllib.error.URLError, ConnectionError),
        )

    def status(self) -> dict[str, Any]:
        """``GET copilot/api/status`` of the sandbox server."""
        request = urllib.request.Request(
            f"{self.url}copilot/api/status", headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)  # type: ignore[no-any-return]

    def wait_status(self, key: str, expected: Any, timeout: float = 10.0) -> dict[str, Any]:
        """Poll the status until ``key`` holds ``expected``; return that status."""
        last: dict[str, Any] = {}

        def holds() -> dict[str, Any] | None:
            last.update(self.status())
            return dict(last) if last[key] == expected else None

        try:
            return eventually_blocking(holds, f"status {key} {expected!r}", timeout, interval=0.2)
        except AssertionError as e:
            raise AssertionError(f"status {key} stayed {last[key]!r}, not {expected!r}") from e

    def stop_server(self) -> None:
        """Stop the sandbox server, if one runs."""
        if self.server is not None and self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.server.kill()
                self.server.wait()
        self.server = None

    def close(self) -> None:
        """Stop the server and leave the namespace (its mounts go with it)."""
        self.stop_server()
        self.holder.kill()
        self.holder.wait()
