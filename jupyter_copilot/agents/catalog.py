"""Which agents a person may talk to: configured ones, known ones on PATH, and the demo.

Pure: the configuration is checked here, and ``which`` is handed in so that discovery can be
tested without touching PATH.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

#: The id of the shipped, rule-based demo agent.
DEMO_AGENT = "demo"


@dataclass(frozen=True)
class AgentSpec:
    """One agent as the server starts it."""

    id: str
    label: str
    description: str
    command: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    #: ``configured``, ``known`` (found on PATH) or ``demo``; for telemetry.
    kind: str = "configured"

    def to_json(self) -> dict[str, str]:
        """What the panel shows: never the command or the environment."""
        return {"id": self.id, "label": self.label, "description": self.description}


#: ACP agents that are offered when their command is on PATH, in this order.
KNOWN_AGENTS: tuple[AgentSpec, ...] = (
    AgentSpec(
        "claude-code",
        "Claude Code",
        "Anthropic's coding agent, through its ACP adapter.",
        ("claude-code-acp",),
        kind="known",
    ),
    AgentSpec(
        "codex",
        "Codex",
        "OpenAI's coding agent, through its ACP adapter.",
        ("codex-acp",),
        kind="known",
    ),
    AgentSpec(
        "gemini",
        "Gemini CLI",
        "Google's Gemini CLI in ACP mode.",
        ("gemini", "--experimental-acp"),
        kind="known",
    ),
    AgentSpec(
        "goose", "Goose", "Block's open-source agent in ACP mode.", ("goose", "acp"), kind="known"
    ),
)


def demo_spec() -> AgentSpec:
    """The shipped demo agent, run with this server's Python."""
    return AgentSpec(
        DEMO_AGENT,
        "Demo agent (rule-based)",
        "Offline demo without a model: docstrings, sorted imports and short explanations.",
        (sys.executable, "-m", "jupyter_copilot.demo_agent"),
        kind="demo",
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
    env = entry.get("env", {})
    if not isinstance(env, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env.items()
    ):
        raise AgentConfigError(f"agent '{agent_id}': 'env' must map strings to strings")
    unknown = set(entry) - {"label", "description", "command", "env"}
    if unknown:
        raise AgentConfigError(f"agent '{agent_id}': unknown keys {sorted(unknown)}")
    # The panel shows one line: the first line of the description.
    first_line = description.strip().splitlines()[0] if description.strip() else ""
    return AgentSpec(agent_id, label.strip() or agent_id, first_line, tuple(command), dict(env))


def build_catalog(
    configured: Mapping[str, Any],
    discover: bool,
    which: Callable[[str], str | None],
    warn: Callable[[str], None],
) -> list[AgentSpec]:
    """The agents on offer, the default first.

    Configured agents come first, in the order given; known ACP agents found on PATH follow
    unless a configured agent has the same id or ``discover`` is off. The demo agent is
    offered when the configuration names no agent, last.
    """
    agents: dict[str, AgentSpec] = {}
    for agent_id, entry in configured.items():
        try:
            spec = parse_agent(agent_id, entry)
        except AgentConfigError as e:
            warn(f"Copilot: ignoring a configured agent: {e}")
            continue
        agents[spec.id] = spec
    if discover:
        for known in KNOWN_AGENTS:
            if known.id not in agents and which(known.command[0]) is not None:
                agents[known.id] = known
    if not configured and DEMO_AGENT not in agents:
        agents[DEMO_AGENT] = demo_spec()
    return list(agents.values())
