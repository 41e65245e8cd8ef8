"""Real third-party ACP agents from npm, run offline against scripted model endpoints.

The pinned packages are installed once per machine by `tests.npmcache` into
``$XDG_CACHE_HOME`` (or ``~/.cache``) ``/jupyter-copilot-tests/npm-agents-<hash>``.

Every run gets an environment of its own (``agent_env``): a private ``HOME``, placeholder API
keys, the model's base URL on 127.0.0.1, no telemetry or auto-update, and proxies that point
at a closed local port so that any stray outside call fails fast.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from tests import npmcache

#: The npm packages and the command each provides (``node_modules/.bin/<command>``).
CLAUDE_PACKAGE = "@agentclientprotocol/claude-agent-acp"
CLAUDE_VERSION = "0.101.0"
GEMINI_PACKAGE = "@google/gemini-cli"
GEMINI_VERSION = "0.61.0"
CODEX_PACKAGE = "@zed-industries/codex-acp"
CODEX_VERSION = "0.16.0"

PACKAGES = {
    CLAUDE_PACKAGE: CLAUDE_VERSION,
    GEMINI_PACKAGE: GEMINI_VERSION,
    CODEX_PACKAGE: CODEX_VERSION,
}

#: Agent name -> (package, command, extra arguments).
AGENTS: dict[str, tuple[str, str, list[str]]] = {
    "claude": (CLAUDE_PACKAGE, "claude-agent-acp", []),
    "gemini": (GEMINI_PACKAGE, "gemini", ["--acp"]),
    "codex": (CODEX_PACKAGE, "codex-acp", []),
}

#: A closed local port: any request through the proxy fails at once.
DEAD_PROXY = "http://127.0.0.1:9"

#: Set to a directory that already holds ``node_modules/.bin/<commands>`` to skip the install.
AGENTS_DIR_ENV = "JUPYTER_COPILOT_NPM_AGENTS"

# -- installing ---------------------------------------------------------------------------


def versions_hash(packages: dict[str, str] | None = None) -> str:
    """A short hash of the pinned ``package@version`` list (names the install directory)."""
    return npmcache.versions_hash(packages or PACKAGES)


def install_dir(packages: dict[str, str] | None = None) -> Path:
    """Where the pinned packages live: ``<cache>/npm-agents-<hash>``."""
    return npmcache.install_dir("agents", packages or PACKAGES, AGENTS_DIR_ENV)


def install_agents(packages: dict[str, str] | None = None) -> Path:
    """Install the pinned npm packages once per machine; return the ``--prefix`` directory.

    Skips (fails on CI) without ``npm``; fails when the install itself fails.
    """
    return npmcache.install_pinned(
        "agents", packages or PACKAGES, "the real ACP agents", AGENTS_DIR_ENV
    )


def agent_command(name: str, directory: Path | None = None) -> list[str]:
    """The argv that starts agent ``name`` (``claude``, ``gemini`` or ``codex``) over ACP."""
    _package, command, extra = AGENTS[name]
    return [*npmcache.bin_command(directory or install_agents(), command), *extra]


# -- the environment of one run -----------------------------------------------------------


def base_env(home: Path) -> dict[str, str]:
    """What every agent gets: a private ``HOME``, ``PATH`` with node, dead proxies."""
    home.mkdir(parents=True, exist_ok=True)
    node = shutil.which("node")
    dirs = [str(Path(node).parent)] if node else []
    path = os.pathsep.join(dict.fromkeys([*dirs, "/usr/local/bin", "/usr/bin", "/bin"]))
    env = {
        "HOME": str(home),
        "PATH": path,
        "USER": os.environ.get("USER", "tester"),
        "LOGNAME": os.environ.get("LOGNAME", "tester"),
        "SHELL": "/bin/bash" if Path("/bin/bash").exists() else "/bin/sh",
        "TERM": "dumb",
        "LANG": "C.UTF-8",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "TMPDIR": str(home / "tmp"),
        "NO_COLOR": "1",
        "CI": "1",
        "HTTP_PROXY": DEAD_PROXY,
        "HTTPS_PROXY": DEAD_PROXY,
        "http_proxy": DEAD_PROXY,
        "https_proxy": DEAD_PROXY,
        "ALL_PROXY": DEAD_PROXY,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }
    (home / "tmp").mkdir(exist_ok=True)
    return env


def claude_env(home: Path, model_url: str) -> dict[str, str]:
    """Claude Code's ACP adapter against a scripted Anthropic API at ``model_url``."""
    env = base_env(home)
    env.update(
        {
            "ANTHROPIC_BASE_URL": model_url,
            "ANTHROPIC_API_KEY": "scripted-anthropic-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_BUG_COMMAND": "1",
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        }
    )
    return env


def gemini_env(
    home: Path, model_url: str, *, system_settings: dict[str, Any] | None = None
) -> dict[str, str]:
    """Gemini CLI against a scripted Gemini API at ``model_url``.

    Its user settings (``$HOME/.gemini/settings.json``) turn telemetry, update checks and
    usage statistics off. ``system_settings``, when given, is written to a file that
    ``GEMINI_CLI_SYSTEM_SETTINGS_PATH`` names (it overrides user and workspace settings).
    """
    env = base_env(home)
    gemini_dir = home / ".gemini"
    gemini_dir.mkdir(parents=True, exist_ok=True)
    user_settings = {
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
    }
    (gemini_dir / "settings.json").write_text(json.dumps(user_settings, indent=2))
    env.update(
        {
            "GOOGLE_GEMINI_BASE_URL": model_url,
            "GEMINI_API_KEY": "scripted-gemini-key",
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "GEMINI_TELEMETRY_ENABLED": "false",
        }
    )
    if system_settings is not None:
        path = home / "gemini-system-settings.json"
        path.write_text(json.dumps(system_settings, indent=2))
        path.chmod(0o644)
        env["GEMINI_CLI_SYSTEM_SETTINGS_PATH"] = str(path)
    return env


def codex_env(home: Path, model_url: str) -> dict[str, str]:
    """codex-acp against a scripted OpenAI-compatible endpoint at ``model_url`` (``.../v1``).

    ``CODEX_HOME/config.toml`` defines a provider with that base URL and selects it.
    """
    env = base_env(home)
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        "\n".join(
            [
                'model = "scripted"',
                'model_provider = "scripted"',
                'approval_policy = "on-request"',
                "[model_providers.scripted]",
                'name = "scripted"',
                f'base_url = "{model_url}"',
                'env_key = "SCRIPTED_API_KEY"',
                'wire_api = "responses"',
                "",
            ]
        )
    )
    env.update({"CODEX_HOME": str(codex_home), "SCRIPTED_API_KEY": "scripted-openai-key"})
    return env


def agent_env(name: str, home: Path, model_url: str, **kwargs: Any) -> dict[str, str]:
    """The offline environment of agent ``name`` (see ``claude_env`` etc.)."""
    builders = {"claude": claude_env, "gemini": gemini_env, "codex": codex_env}
    return builders[name](home, model_url, **kwargs)


# -- running one over ACP -----------------------------------------------------------------


@contextlib.asynccontextmanager
async def spawn_agent(
    client: Any, argv: list[str], env: dict[str, str], cwd: Path, stderr_path: Path
) -> AsyncIterator[tuple[Any, Any]]:
    """Start ``argv`` over ACP as our server would; yield ``(connection, process)``.

    The agent's stderr goes to ``stderr_path`` (the ACP helper would pipe it without
    reading it, and a chatty agent would block). The process is killed on the way out.
    """
    import acp

    with stderr_path.open("wb") as stderr:
        async with acp.spawn_agent_process(
            client,
            argv[0],
            *argv[1:],
            env=env,
            cwd=str(cwd),
            transport_kwargs={"stderr": stderr.fileno()},
        ) as (conn, process):
            try:
                yield conn, process
            finally:
                if process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        process.kill()
