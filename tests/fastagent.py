"""A real third-party ACP agent, fast-agent, run offline against a scripted model endpoint.

``fast-agent-mcp`` needs Python 3.12 or newer, so it lives in its own virtualenv, built once
per machine under ``~/.cache/jupyter-copilot-tests/`` (pyenv's 3.12 or 3.13 will do). Its
``generic`` provider talks to an OpenAI-compatible endpoint: the test serves one
(``ScriptedModel``) whose answers follow a script, step by step, and which records every
request so a test can assert exactly what the model saw.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import acp
import pytest
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    HttpHeader,
    HttpMcpServer,
    PermissionOption,
    RequestPermissionResponse,
)

from tests.npmcache import install_lock
from tests.scriptedmodel import MODEL_NAME

FAST_AGENT_VERSION = "0.10.48"
MCP_SERVER_NAME = "jupyter-copilot"

#: Set to a Python >= 3.12 interpreter to use it for the fast-agent virtualenv.
PYTHON_ENV = "FAST_AGENT_PYTHON"


# -- the fast-agent virtualenv ------------------------------------------------------------


def cache_dir() -> Path:
    """Where the virtualenv is kept between runs (``$XDG_CACHE_HOME`` or ``~/.cache``)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "jupyter-copilot-tests" / f"fast-agent-{FAST_AGENT_VERSION}"


def _is_recent_python(executable: str) -> bool:
    """Whether ``executable`` runs, is Python >= 3.12 and can make virtualenvs."""
    probe = "import sys, ensurepip, venv; sys.exit(0 if sys.version_info >= (3, 12) else 1)"
    try:
        done = subprocess.run(
            [executable, "-c", probe], capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _pyenv_root() -> Path | None:
    if os.environ.get("PYENV_ROOT"):
        return Path(os.environ["PYENV_ROOT"])
    pyenv = shutil.which("pyenv")
    if pyenv:
        done = subprocess.run([pyenv, "root"], capture_output=True, text=True, check=False)
        if done.returncode == 0 and done.stdout.strip():
            return Path(done.stdout.strip())
    default = Path.home() / ".pyenv"
    return default if default.is_dir() else None


def python_candidates() -> Iterator[str]:
    """Interpreters worth trying, most explicit first.

    ``$FAST_AGENT_PYTHON``, this interpreter when it is recent enough, pyenv's 3.12 and 3.13
    builds (newest first), then ``python3.13`` / ``python3.12`` on ``PATH``. A pyenv shim
    on ``PATH`` may name a version that is not installed, so every candidate is probed.
    """
    if os.environ.get(PYTHON_ENV):
        yield os.environ[PYTHON_ENV]
    if sys.version_info >= (3, 12):
        yield sys.executable
    root = _pyenv_root()
    if root is not None:
        found = glob.glob(str(root / "versions" / "3.1[2-9]*" / "bin" / "python"))
        yield from sorted(found, reverse=True)
    for name in ("python3.13", "python3.12"):
        path = shutil.which(name)
        if path:
            yield path


def find_python() -> str | None:
    """The first working Python >= 3.12, or None."""
    for candidate in python_candidates():
        if _is_recent_python(candidate):
            return candidate
    return None


def _unavailable(message: str) -> NoReturn:
    """Fail on CI (a missing agent there is a broken machine), skip elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def build_venv(python: str, target: Path) -> float:
    """Install ``fast-agent-mcp`` into a fresh virtualenv at ``target``; return the seconds.

    The virtualenv is built in a temporary sibling directory and renamed into place only
    when the install succeeded, so a half-built one is never reused. Its console scripts
    keep the temporary path in their shebang: run them through ``bin/python`` (see
    ``fast_agent_command``). Only ``fast-agent-mcp`` is installed: the separate
    ``fast-agent-acp`` wrapper package breaks the command.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    build = Path(tempfile.mkdtemp(prefix=f".{target.name}-build-", dir=target.parent))
    try:
        subprocess.run([python, "-m", "venv", str(build)], check=True, capture_output=True)
        done = subprocess.run(
            [
                str(build / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                f"fast-agent-mcp=={FAST_AGENT_VERSION}",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0 or not (build / "bin" / "fast-agent-acp").exists():
            pytest.fail(
                f"pip could not install fast-agent-mcp=={FAST_AGENT_VERSION} with {python}:\n"
                + (done.stdout + done.stderr)[-4000:],
                pytrace=False,
            )
        try:
            build.rename(target)
        except OSError:
            # Another test process finished first: keep theirs.
            if not _usable(target):
                raise
    finally:
        shutil.rmtree(build, ignore_errors=True)
    return time.monotonic() - started


def _usable(venv: Path) -> bool:
    """Whether ``venv`` was built completely and its base interpreter is still there."""
    return (venv / "bin" / "fast-agent-acp").exists() and (venv / "bin" / "python").exists()


def fast_agent_venv() -> Path:
    """The virtualenv holding ``fast-agent-acp``, built on first use.

    A lock keeps test processes running at the same time (pytest-xdist's workers) from
    building it twice or removing one that another process has just finished.
    """
    target = cache_dir()
    if _usable(target):
        return target
    python = find_python()
    if python is None:
        _unavailable(
            f"fast-agent-mcp {FAST_AGENT_VERSION} needs Python >= 3.12 and none was found "
            f"(tried ${PYTHON_ENV}, pyenv versions 3.12+, python3.13 and python3.12 on PATH). "
            "Install one, e.g. `pyenv install 3.12`, or set "
            f"{PYTHON_ENV}=/path/to/python3.12."
        )
    with install_lock(target.parent / f".{target.name}.lock"):
        if _usable(target):  # another process finished it while we waited
            return target
        if target.exists():
            shutil.rmtree(target)  # half-built by hand, or its base Python is gone
        seconds = build_venv(python, target)
    print(f"built the fast-agent virtualenv at {target} in {seconds:.0f} s", file=sys.stderr)
    return target


def fast_agent_command(venv: Path) -> list[str]:
    """The command that starts fast-agent's ACP server from ``venv``.

    The script runs through the virtualenv's own interpreter because its shebang names the
    temporary build directory.
    """
    return [str(venv / "bin" / "python"), str(venv / "bin" / "fast-agent-acp")]


@dataclass
class FastAgentRun:
    """One run of fast-agent: its directory, its argv and the environment it needs.

    Everything the agent writes stays in ``directory``: its config and log, its fast-agent
    home (``--home``) and ``HOME`` itself, so the person's own fast-agent settings are
    neither read nor written.
    """

    directory: Path
    argv: list[str]
    env: dict[str, str]

    @property
    def log(self) -> Path:
        """fast-agent's own log (warnings and errors, JSON lines)."""
        return self.directory / "fast-agent-log.jsonl"

    def agent_setting(self, label: str = "fast-agent") -> dict[str, Any]:
        """This run as one entry of ``c.CopilotApp.agents``."""
        return {
            "label": label,
            "description": "fast-agent over ACP, answered by the test's scripted model.",
            "command": self.argv,
            "env": self.env,
        }


def prepare_run(command: list[str], model_url: str, directory: Path) -> FastAgentRun:
    """Config, home and argv for one fast-agent run against the model at ``model_url``.

    The argv selects our config, the scripted model and a fresh home, and leaves out
    fast-agent's local shell and subagents, which the tests never want.
    """
    home = directory / "home"
    home.mkdir(parents=True, exist_ok=True)
    config = write_config(directory, model_url)
    argv = [
        *command,
        "--config-path",
        str(config),
        "--model",
        f"generic.{MODEL_NAME}",
        "--home",
        str(directory / "fast-agent-home"),
        "--no-shell",
        "--no-subagents",
    ]
    return FastAgentRun(directory, argv, {"HOME": str(home)})


def write_config(directory: Path, model_url: str) -> Path:
    """A fast-agent config that sends every completion to ``model_url`` and nothing else.

    Retries are off so that each scripted step answers exactly one request; the log file
    stays in ``directory``. JSON is YAML, so no YAML writer is needed.
    """
    config = {
        "default_model": f"generic.{MODEL_NAME}",
        "llm_retries": 0,
        "session_history": False,
        "generic": {"api_key": "scripted-model-key", "base_url": model_url},
        "logger": {
            "type": "file",
            "path": str(directory / "fast-agent-log.jsonl"),
            "level": "warning",
            "progress_display": False,
        },
        "otel": {"enabled": False},
    }
    path = directory / "fastagent.config.yaml"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")
    return path


# -- an ACP client that stands in for the person ------------------------------------------


class RecordingClient:
    """An ACP client that allows every permission request once and records what it sees.

    No file system or terminal: the client capabilities it announces say so.
    """

    def __init__(self) -> None:
        self.permissions: list[dict[str, Any]] = []
        self.updates: list[Any] = []

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        """Record the request and choose its ``allow_once`` option (cancel without one)."""
        self.permissions.append(
            {
                "title": tool_call.title,
                "toolCallId": tool_call.tool_call_id,
                "options": [(o.option_id, o.kind) for o in options],
            }
        )
        allow = next((o for o in options if o.kind == "allow_once"), None)
        if allow is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=allow.option_id)
        )

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        """Record every update (message chunks, tool calls, commands)."""
        self.updates.append(update)

    def agent_text(self) -> str:
        """Everything the agent said as message chunks, joined."""
        return "".join(
            u.content.text
            for u in self.updates
            if getattr(u, "session_update", None) == "agent_message_chunk"
            and getattr(u.content, "type", None) == "text"
        )

    def on_connect(self, conn: Any) -> None:
        """Nothing to do: the test holds the connection."""


def jupyter_mcp_server(url: str, authorization: str) -> HttpMcpServer:
    """Our MCP endpoint as an ACP ``session/new`` entry, named ``jupyter-copilot``."""
    return HttpMcpServer(
        type="http",
        name=MCP_SERVER_NAME,
        url=url,
        headers=[HttpHeader(name="Authorization", value=authorization)],
    )


@contextlib.asynccontextmanager
async def spawn_fast_agent(client: Any, run: FastAgentRun) -> AsyncIterator[tuple[Any, Path]]:
    """Start ``run`` over ACP as our own client would, in its directory; yield the connection.

    The agent's stderr goes to ``stderr.log`` in the run's directory: the ACP helper would
    pipe it without reading, and a chatty agent would block.
    """
    path = run.directory / "stderr.log"
    with path.open("wb") as stderr:
        async with acp.spawn_agent_process(
            client,
            run.argv[0],
            *run.argv[1:],
            env=run.env,
            cwd=str(run.directory),
            transport_kwargs={"stderr": stderr.fileno()},
        ) as (conn, _process):
            yield conn, path
