"""The administrator's policy for side-panel conversations (docs/admin.md, "Policy").

``CopilotApp.allowed_agents``, ``allowed_modes`` and ``allowed_context_refs`` say which agents,
approval modes and context references a conversation may use; ``default_agent``,
``default_mode`` and ``default_context_refs`` what a new conversation starts with. Anything
outside the policy ends ``not-permitted`` (docs/protocol.md section 7).

Like the kill switch (``killswitch.py``), the policy is read again at every check: the traits
as the server started, narrowed by what every live JSON config file
(``jupyter_copilot_config.json``, ``jupyter_server_config.json`` in the config path) says now.
So an administrator tightening the policy in a JSON config file takes effect at the next
check without a restart, and no one JSON file can widen what another allows. Widening beyond
the traits the server started with needs a restart. A file whose value cannot be used allows
nothing for that setting (fail closed) until it is fixed.

Defaults outside the allowed set fall back, with a warning, to the first allowed choice in
the documented order (the strictest mode first); the server still starts.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..admin.killswitch import RECENT_NS, candidate_paths, read_regular_file, unique_directories
from ..protocol.callers import APPROVAL_MODES, CONTEXT_REFS
from ..protocol.refusals import Refusal

if TYPE_CHECKING:
    from ..admin.killswitch import Logger

#: The trait names a live JSON config file may narrow, and what each may hold.
_LIVE_KEYS = {
    "allowed_agents": None,
    "allowed_modes": APPROVAL_MODES,
    "allowed_context_refs": CONTEXT_REFS,
}


def _not_permitted(message: str) -> Refusal:
    return Refusal("not-permitted", message)


@dataclass(frozen=True)
class Policy:
    """The policy at one moment; pure.

    ``agents`` is ``None`` when every agent on offer is allowed. ``modes`` and
    ``context_refs`` are in the documented order.
    """

    agents: frozenset[str] | None
    modes: tuple[str, ...]
    context_refs: tuple[str, ...]
    #: What the administrator configured as defaults (checked by the ``default_*`` methods).
    wanted_agent: str | None = None
    wanted_mode: str = "interactive"
    wanted_context_refs: tuple[str, ...] = ("selected_cell",)

    def allows_agent(self, agent_id: str) -> bool:
        """Whether conversations may use this agent."""
        return self.agents is None or agent_id in self.agents

    def allowed_agents(self, offered: Iterable[str]) -> list[str]:
        """The agents on offer that the policy allows, in their order."""
        return [a for a in offered if self.allows_agent(a)]

    def default_agent(self, offered: Sequence[str]) -> str | None:
        """The agent of a new conversation: the configured one if allowed, else the first."""
        allowed = self.allowed_agents(offered)
        if self.wanted_agent in allowed:
            return self.wanted_agent
        return allowed[0] if allowed else None

    def default_mode(self) -> str | None:
        """The mode of a new conversation: the configured one if allowed, else the strictest."""
        if self.wanted_mode in self.modes:
            return self.wanted_mode
        return self.modes[0] if self.modes else None

    def default_context_refs(self) -> list[str]:
        """The context references of a new conversation: the configured ones that are allowed."""
        return [r for r in self.context_refs if r in self.wanted_context_refs]

    def check(
        self,
        agent_id: str | None = None,
        mode: str | None = None,
        context_refs: Iterable[str] | None = None,
    ) -> None:
        """Refuse with ``not-permitted`` what the policy does not allow; ``None`` is not asked."""
        if agent_id is not None and not self.allows_agent(agent_id):
            raise _not_permitted("This server's administrator does not allow that agent.")
        if mode is not None and mode not in self.modes:
            raise _not_permitted(f"This server's administrator does not allow the '{mode}' mode.")
        refused = [r for r in (context_refs or ()) if r not in self.context_refs]
        if refused:
            raise _not_permitted(
                f"This server's administrator does not allow the context reference '{refused[0]}'."
            )

    def caller_mode(self, mode: str) -> str:
        """The approval mode an agent's tool call runs in: Plan when its mode is no longer
        allowed (the policy was tightened mid-turn), which can never widen anything."""
        return mode if mode in self.modes else APPROVAL_MODES[0]

    def to_json(self, offered: Sequence[str]) -> dict[str, Any]:
        """The ``policy`` object of ``GET copilot/api/agents``."""
        return {
            "allowedAgents": self.allowed_agents(offered),
            "allowedModes": list(self.modes),
            "allowedContextRefs": list(self.context_refs),
            "restricted": self.agents is not None
            or len(self.modes) < len(APPROVAL_MODES)
            or len(self.context_refs) < len(CONTEXT_REFS),
        }


def narrowed(base: Policy, files: Iterable[dict[str, frozenset[str]]]) -> Policy:
    """``base`` narrowed by each file's allowed sets (key absent: the file says nothing)."""
    agents = base.agents
    modes = set(base.modes)
    refs = set(base.context_refs)
    for says in files:
        if "allowed_agents" in says:
            agents = says["allowed_agents"] if agents is None else agents & says["allowed_agents"]
        if "allowed_modes" in says:
            modes &= says["allowed_modes"]
        if "allowed_context_refs" in says:
            refs &= says["allowed_context_refs"]
    return Policy(
        agents=agents,
        modes=tuple(m for m in APPROVAL_MODES if m in modes),
        context_refs=tuple(r for r in CONTEXT_REFS if r in refs),
        wanted_agent=base.wanted_agent,
        wanted_mode=base.wanted_mode,
        wanted_context_refs=base.wanted_context_refs,
    )


def file_says(raw: bytes) -> tuple[dict[str, frozenset[str]], list[str]]:
    """What one live JSON config file says about the policy, and the settings it got wrong.

    A setting whose value is not a list of known names allows nothing (fail closed). An
    empty ``allowed_agents`` says nothing, as for the trait (every agent).
    """
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return {}, []  # the kill switch already fails closed on, and warns about, such a file
    section = data.get("CopilotApp") if isinstance(data, dict) else None
    if not isinstance(section, dict):
        return {}, []
    says: dict[str, frozenset[str]] = {}
    wrong: list[str] = []
    for key, known in _LIVE_KEYS.items():
        if key not in section:
            continue
        value = section[key]
        if (
            not isinstance(value, list)
            or not all(isinstance(v, str) for v in value)
            or (known is not None and not set(value) <= set(known))
        ):
            says[key] = frozenset()
            wrong.append(key)
        elif key == "allowed_agents" and not value:
            continue
        else:
            says[key] = frozenset(value)
    return says, wrong


@dataclass
class _Seen:
    signature: tuple[int, int, int, int]
    says: dict[str, frozenset[str]]


class AdminPolicy:
    """The policy of one server: the traits at start, narrowed by the live JSON files now."""

    def __init__(self, base: Callable[[], Policy], directories: Sequence[str], log: Logger) -> None:
        self._base = base
        self._paths = candidate_paths(unique_directories(directories))
        self._seen: dict[str, _Seen] = {}
        self.log = log

    def current(self) -> Policy:
        """The policy now (a few ``os.stat`` calls; files are read only when they changed)."""
        now = time.time_ns()
        files = []
        for path in self._paths:
            try:
                st = os.stat(path)
            except OSError:
                self._seen.pop(path, None)
                continue
            signature = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev)
            seen = self._seen.get(path)
            if seen is None or seen.signature != signature or 0 <= now - st.st_mtime_ns < RECENT_NS:
                seen = self._read(path, signature, seen)
            files.append(seen.says)
        return narrowed(self._base(), files)

    def _read(self, path: str, signature: tuple[int, int, int, int], old: _Seen | None) -> _Seen:
        try:
            says, wrong = file_says(read_regular_file(path))
        except (OSError, ValueError):
            says, wrong = {}, []  # unreadable: the kill switch is engaged by it already
        if wrong and (old is None or old.signature != signature):
            self.log.warning(
                "jupyter-copilot: %s in a Jupyter config file (%s) is not a list of known "
                "names; it allows nothing until it is fixed.",
                ", ".join(f"CopilotApp.{k}" for k in wrong),
                os.path.basename(path),
            )
        seen = _Seen(signature, says)
        self._seen[path] = seen
        return seen

    def warn_about_defaults(
        self, offered: Sequence[str], startable: Sequence[str] | None = None
    ) -> None:
        """Log, once at start, every default outside the policy and what replaces it.

        ``startable`` are the agents on offer that can start (default: all of them); only
        those can be a default.
        """
        policy = self.current()
        startable = offered if startable is None else startable
        if policy.agents is not None:
            unknown = sorted(policy.agents - set(offered))
            if unknown:
                self.log.warning(
                    "jupyter-copilot: CopilotApp.allowed_agents names agents that are not on "
                    "offer: %s",
                    ", ".join(unknown),
                )
        default = policy.default_agent(startable)
        if policy.wanted_agent is not None and default != policy.wanted_agent:
            self.log.warning(
                "jupyter-copilot: CopilotApp.default_agent '%s' is not an allowed agent on "
                "offer that can start; new conversations use '%s'.",
                policy.wanted_agent,
                default,
            )
        if policy.default_mode() != policy.wanted_mode:
            self.log.warning(
                "jupyter-copilot: CopilotApp.default_mode '%s' is not in allowed_modes; new "
                "conversations use '%s'.",
                policy.wanted_mode,
                policy.default_mode(),
            )
        dropped = [r for r in policy.wanted_context_refs if r not in policy.context_refs]
        if dropped:
            self.log.warning(
                "jupyter-copilot: CopilotApp.default_context_refs holds references outside "
                "allowed_context_refs (%s); new conversations start without them.",
                ", ".join(dropped),
            )
