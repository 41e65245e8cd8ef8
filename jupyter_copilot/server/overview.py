"""What ``GET copilot/api/status``, ``manifest`` and ``tools`` answer (docs/protocol.md 2, 3)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._version import __version__
from ..admin.killswitch import KillSwitchState
from ..page.dispatcher import Dispatcher
from ..page.sessions import Registrations
from ..protocol.registry import CopilotRegistry
from ..tools.toolspecs import NOTEBOOK_TOOLS


@dataclass(frozen=True)
class Overview:
    """The extension's published state, each part read at call time."""

    registry: CopilotRegistry
    registrations: Registrations
    dispatcher: Dispatcher
    #: ``CopilotApp.enabled``: the feature switch.
    enabled: Callable[[], bool]
    #: The kill switch now, with every JSON config file re-checked.
    kill_switch: Callable[[], KillSwitchState]
    #: Whether real-time collaboration (jupyter-server-ydoc) is enabled.
    rtc: Callable[[], bool]
    #: The agent sandbox as the status reports it.
    sandbox: Callable[[], dict[str, Any]]
    #: The names of the settings that did not validate (agents and tools are then off).
    config_errors: Callable[[], list[str]]

    def status(self) -> dict[str, Any]:
        """The body of ``GET copilot/api/status``; answers even when the feature switch is off."""
        kill_switch = self.kill_switch()
        return {
            "version": __version__,
            "enabled": self.enabled(),
            "toolsEnabled": not kill_switch.engaged,
            "killSwitch": kill_switch.to_json(),
            "pages": len(self.dispatcher.pages()),
            "rtc": self.rtc(),
            "agentSandbox": self.sandbox(),
            "configErrors": self.config_errors(),
        }

    def manifest(self) -> dict[str, list[dict[str, Any]]]:
        """The registry as served, empty when the feature switch is off."""
        if not self.enabled():
            return {"pages": [], "tools": []}
        return self.registry.manifest()

    def tools(self) -> dict[str, list[dict[str, Any]]]:
        """The body of ``GET copilot/api/tools``: definitions and per-session registrations."""
        if not self.enabled():
            return {"tools": [], "registrations": []}
        return {
            "tools": list(self.registry.tools),
            "registrations": [
                r.to_json(spec.name) for r in self.registrations.all() for spec in NOTEBOOK_TOOLS
            ],
        }
