"""Which agents a person may talk to: configured ones, known ones on PATH, and the demo.

Pure: the configuration is checked here, and ``which`` is handed in so that discovery can be
tested without touching PATH.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

#: The id of the shipped, rule-based demo agent.
DEMO_AGENT = "demo"


@dataclass(frozen=True)
class FromEnv:
    """An ``env`` value taken from the server's own environment when the agent starts.

    Configured as ``{"fromEnv": "NAME"}``, so that a key stays out of the config files; an
    unset variable is left out of the agent's environment.
    """

    name: str


EnvValue = str | FromEnv


@dataclass(frozen=True)
class AgentSpec:
    """One agent as the server starts it."""

    id: str
    label: str
    description: str
    command: tuple[str, ...]
    env: Mapping[str, EnvValue] = field(default_factory=dict)
    #: ``configured``, ``known`` (found on PATH), ``model`` (the built-in model agent) or
    #: ``demo``; for telemetry.
    kind: str = "configured"
    #: Whether the product can hold the agent to its rules: it sends its own file and shell
    #: tools through us and asks before acting, or has none. See docs/security.md.
    guarded: bool = True
    #: The agent's own session mode in which it asks before acting, and its plan mode.
    ask_mode: str | None = None
    plan_mode: str | None = None
    #: Files under the person's HOME the agent logs in with, shown to it read-only in the
    #: sandbox (its own HOME there is a product-owned folder: docs/security.md).
    credentials: tuple[str, ...] = ()
    #: Folders under the person's HOME holding its settings, copied into its own HOME in
    #: the sandbox at every start.
    settings: tuple[str, ...] = ()
    #: Hosts (``host`` or ``host:port``) its model API lives on, reachable from the sandbox
    #: unless one of ``base_url_env`` points it at another API.
    network_hosts: tuple[str, ...] = ()
    #: Variables that point it at another model API than its own.
    base_url_env: tuple[str, ...] = ()
    #: Whether its own tools read files without asking us: then only the sandbox holds it to
    #: the ``files`` grant, and without one it is unguarded.
    unrouted_reads: bool = False
    #: Environment that is safe only under the sandbox (which hides settings folders).
    sandbox_env: Mapping[str, str] = field(default_factory=dict)
    #: Start in a private empty folder instead of the server's root: for an agent that
    #: never needs the folder, so that nothing in it (an ``acp.py``) can be imported.
    private_cwd: bool = False
    #: The ``_meta`` of its ``session/new`` and ``session/load``: settings it is started with
    #: that hold it to our rules (docs/security.md).
    session_meta: Mapping[str, Any] = field(default_factory=dict)
    #: Why it cannot start on this server (shown in the Agent menu), or None when it can.
    unavailable: str | None = None
    #: How a person installs it, for a known agent: shown when its command is missing.
    install: str | None = None

    def model_hosts(self, env: Mapping[str, str]) -> tuple[str, ...]:
        """The hosts of its own model API, unless ``env`` points it at another one."""
        return () if any(env.get(name) for name in self.base_url_env) else self.network_hosts

    def to_json(self) -> dict[str, Any]:
        """What the panel shows: never the command or the environment."""
        return {
            "id": self.id,
            "label": self.label,
            "description": self.description,
            "guarded": self.guarded,
            "warning": None if self.guarded else UNGUARDED_WARNING,
            "unavailable": self.unavailable,
        }


#: What the Agent menu says of an agent that the product cannot hold to its rules.
UNGUARDED_WARNING = (
    "This agent can act on your files and run commands without asking jupyter-copilot "
    "first: its changes are not reviewed."
)


def _passed_through(*names: str) -> dict[str, EnvValue]:
    return {name: FromEnv(name) for name in names}


#: What keeps a known agent local and quiet: no telemetry, no self-update, no side traffic.
_QUIET = {"DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "DO_NOT_TRACK": "1"}


#: Claude Code runs a command that its own classifier calls read-only (``ls``, ``cat <file>``)
#: without asking, in every mode of its own. An ask rule for its Bash tool, in the settings
#: its adapter passes to it, makes it ask us for every command: our Plan and Chat-only then
#: refuse it, and Ask before edits shows its card.
_CLAUDE_ASKS_FOR_EVERY_COMMAND = {
    "claudeCode": {"options": {"settings": {"permissions": {"ask": ["Bash"]}}}}
}


#: ACP agents that are offered when their command is on PATH, in this order. Each entry is
#: a profile: the commands to look for (current name first), what its environment needs and
#: how it is held (docs/security.md lists what each routes through us).
KNOWN_AGENTS: tuple[tuple[AgentSpec, tuple[tuple[str, ...], ...]], ...] = (
    (
        AgentSpec(
            "claude-code",
            "Claude Code",
            "Anthropic's coding agent, through its ACP adapter.",
            ("claude-agent-acp",),
            env={
                **_QUIET,
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                **_passed_through(
                    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"
                ),
            },
            kind="known",
            ask_mode="default",
            # Not its "plan" mode: there Claude Code lets its own classifier allow commands
            # without asking us. In "default" it asks, and our Plan rejects at once.
            plan_mode="default",
            credentials=(".claude/.credentials.json",),
            settings=(".claude",),
            network_hosts=("api.anthropic.com",),
            base_url_env=("ANTHROPIC_BASE_URL",),
            unrouted_reads=True,
            session_meta=_CLAUDE_ASKS_FOR_EVERY_COMMAND,
            install="npm install -g @agentclientprotocol/claude-agent-acp",
        ),
        (("claude-agent-acp",), ("claude-code-acp",)),
    ),
    (
        AgentSpec(
            "codex",
            "Codex",
            "OpenAI's coding agent, through its ACP adapter.",
            ("codex-acp",),
            env={**_QUIET, **_passed_through("OPENAI_API_KEY", "OPENAI_BASE_URL")},
            kind="known",
            guarded=False,
            credentials=(".codex/auth.json",),
            settings=(".codex",),
            network_hosts=("api.openai.com", "chatgpt.com"),
            base_url_env=("OPENAI_BASE_URL",),
            install="npm install -g @zed-industries/codex-acp",
        ),
        (("codex-acp",),),
    ),
    (
        AgentSpec(
            "gemini",
            "Gemini CLI",
            "Google's Gemini CLI in ACP mode.",
            ("gemini", "--acp"),
            env={
                **_QUIET,
                **_passed_through("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL"),
            },
            kind="known",
            ask_mode="default",
            plan_mode="plan",
            credentials=(".gemini/oauth_creds.json", ".gemini/google_accounts.json"),
            settings=(".gemini",),
            network_hosts=(
                "generativelanguage.googleapis.com",
                "cloudcode-pa.googleapis.com",
                "oauth2.googleapis.com",
            ),
            base_url_env=("GOOGLE_GEMINI_BASE_URL",),
            unrouted_reads=True,
            # Gemini drops client MCP servers in a folder it does not trust, and trusting a
            # folder also runs the settings in its .gemini: only under the sandbox, which
            # hides that folder, is the notebook folder trusted.
            sandbox_env={"GEMINI_CLI_TRUST_WORKSPACE": "true"},
            install="npm install -g @google/gemini-cli",
        ),
        (("gemini", "--acp"),),
    ),
    (
        AgentSpec(
            "goose",
            "Goose",
            "Block's open-source agent in ACP mode.",
            ("goose", "acp"),
            env=dict(_QUIET),
            kind="known",
            guarded=False,
            settings=(".config/goose",),
            install="see block.github.io/goose for its installer",
        ),
        (("goose", "acp"),),
    ),
)


def unsandboxed(spec: AgentSpec) -> AgentSpec:
    """``spec`` as it is held where no sandbox works: an agent whose own tools read files
    without asking us is then unguarded."""
    return replace(spec, guarded=False) if spec.unrouted_reads else spec


def demo_spec() -> AgentSpec:
    """The shipped demo agent, run with this server's Python."""
    return AgentSpec(
        DEMO_AGENT,
        "Demo agent (rule-based)",
        "Offline demo without a model: docstrings, sorted imports and short explanations.",
        # Isolated (-I): neither the folder it starts in nor PYTHON* variables reach its
        # imports.
        (sys.executable, "-I", "-m", "jupyter_copilot.demo_agent"),
        kind="demo",
        private_cwd=True,
    )


class AgentConfigError(ValueError):
    """One entry of ``CopilotApp.agents`` cannot be used; the message says why."""


def parse_agent(agent_id: Any, entry: Any) -> AgentSpec:
    """Check one configured agent; raises :class:`AgentConfigError` naming what is wrong."""
    if not isinstance(agent_id, str) or not agent_id.strip() or len(agent_id) > 64:
        raise AgentConfigError("an agent id must be a non-empty string of at most 64 characters")
    if not isinstance(entry, Mapping):
        raise AgentConfigError(f"agent '{agent_id}' must be a dict with label and command")
    command = entry.get("command")
    if isinstance(command, str):
        command = shlex.split(command)
    if (
        not isinstance(command, (list, tuple))
        or not command
        or not all(isinstance(part, str) and part for part in command)
    ):
        raise AgentConfigError(f"agent '{agent_id}': 'command' must be a non-empty list of strings")
    label = entry.get("label", agent_id)
    description = entry.get("description", "")
    if not isinstance(label, str) or not isinstance(description, str):
        raise AgentConfigError(f"agent '{agent_id}': 'label' and 'description' must be strings")
    env = _parse_env(agent_id, entry.get("env", {}))
    guarded = entry.get("guarded", True)
    if not isinstance(guarded, bool):
        raise AgentConfigError(f"agent '{agent_id}': 'guarded' must be true or false")
    unknown = set(entry) - {"label", "description", "command", "env", "guarded"}
    if unknown:
        raise AgentConfigError(f"agent '{agent_id}': unknown keys {sorted(unknown)}")
    # The panel shows one line: the first line of the description.
    first_line = description.strip().splitlines()[0] if description.strip() else ""
    return AgentSpec(
        agent_id, label.strip() or agent_id, first_line, tuple(command), env, guarded=guarded
    )


def _parse_env(agent_id: str, env: Any) -> dict[str, EnvValue]:
    problem = f"agent '{agent_id}': 'env' must map names to strings or {{\"fromEnv\": NAME}}"
    if not isinstance(env, Mapping):
        raise AgentConfigError(problem)
    parsed: dict[str, EnvValue] = {}
    for key, value in env.items():
        if not isinstance(key, str) or not key:
            raise AgentConfigError(problem)
        if isinstance(value, str):
            parsed[key] = value
        elif (
            isinstance(value, Mapping)
            and set(value) == {"fromEnv"}
            and isinstance(value["fromEnv"], str)
            and value["fromEnv"]
        ):
            parsed[key] = FromEnv(value["fromEnv"])
        else:
            raise AgentConfigError(problem)
    return parsed


def resolve_env(env: Mapping[str, EnvValue], server_env: Mapping[str, str]) -> dict[str, str]:
    """An agent's ``env`` with every ``fromEnv`` value read from the server's environment."""
    resolved: dict[str, str] = {}
    for key, value in env.items():
        if isinstance(value, FromEnv):
            if value.name in server_env:
                resolved[key] = server_env[value.name]
        else:
            resolved[key] = value
    return resolved


def build_catalog(
    configured: Mapping[str, Any],
    discover: bool,
    which: Callable[[str], str | None],
    warn: Callable[[str], None],
    allow_unguarded: bool = False,
    sandboxed: bool = True,
    models: Sequence[AgentSpec] = (),
) -> list[AgentSpec]:
    """The agents on offer, the default first.

    Configured agents come first, in the order given, then ``models`` (model endpoints run
    by the built-in model agent, ``models.py``); known ACP agents found on PATH follow
    unless a configured agent has the same id or ``discover`` is off. A known agent that the
    product cannot hold to its rules is offered only with ``allow_unguarded``; without a
    working sandbox (``sandboxed`` false) that includes every agent whose own tools read
    files without asking us. The demo agent is offered when the configuration names no
    agent, after them. Known agents that would be offered but are not installed come last,
    marked ``unavailable`` with their install command. A configured agent whose command is
    not found keeps its place, marked ``unavailable`` (:func:`command_not_found`).
    """
    agents: dict[str, AgentSpec] = {}
    for agent_id, entry in configured.items():
        try:
            spec = parse_agent(agent_id, entry)
        except AgentConfigError as e:
            warn(f"Copilot: ignoring a configured agent: {e}")
            continue
        agents[spec.id] = spec if which(spec.command[0]) else command_not_found(spec)
    for spec in models:
        agents.setdefault(spec.id, spec)
    missing: list[AgentSpec] = []
    if discover:
        for profile, commands in KNOWN_AGENTS:
            known = profile if sandboxed else unsandboxed(profile)
            if known.id in agents or not (known.guarded or allow_unguarded):
                continue
            found = next((c for c in commands if which(c[0]) is not None), None)
            if found is not None:
                agents[known.id] = replace(known, command=found)
            else:
                missing.append(not_installed(known))
    if not configured and DEMO_AGENT not in agents:
        agents[DEMO_AGENT] = demo_spec()
    return [*agents.values(), *missing]


def not_installed(spec: AgentSpec) -> AgentSpec:
    """A known agent whose command is not on PATH: listed, with how to install it, but it
    cannot be chosen (docs/conversations.md, "GET agents")."""
    reason = f"Not installed: {spec.install}, then restart JupyterLab."
    return replace(spec, description=reason, unavailable=reason)


def command_not_found(spec: AgentSpec) -> AgentSpec:
    """A configured agent whose program is neither on PATH nor an executable file: listed in
    its place, but it cannot be chosen. Only the program's name is shown, not its folder."""
    program = spec.command[0].rsplit("/", 1)[-1]
    reason = (
        f"Not installed: the program '{program}' is not found; install it, then restart JupyterLab."
    )
    return replace(spec, description=reason, unavailable=reason)


def available(specs: Iterable[AgentSpec]) -> list[str]:
    """The ids of the agents that can start, in their order: the ones a default may name."""
    return [spec.id for spec in specs if spec.unavailable is None]
