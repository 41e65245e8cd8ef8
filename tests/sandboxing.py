"""How tests run agents with respect to the sandbox (docs/security.md, "The sandbox").

The scripted test agents record what they received in a file of the test's folder, which
the sandbox rightly forbids: every file outside the agent's own HOME is read-only to it.
A configuration with such an agent therefore runs without the sandbox unless it names
``agent_sandbox`` itself; the sandbox's own tests do, and so does every test of the demo
and real third-party agents, which run sandboxed as they ship.
"""

from __future__ import annotations

from typing import Any


def records_to_a_file(copilot: dict[str, Any]) -> bool:
    """Whether a configured agent writes a record for the test (``SCRIPTED_AGENT_LOG``)."""
    agents = copilot.get("agents") or {}
    if not isinstance(agents, dict):
        return False  # an invalid setting, as the configuration tests give it
    return any(
        isinstance(entry, dict) and "SCRIPTED_AGENT_LOG" in (entry.get("env") or {})
        for entry in agents.values()
    )


def sandbox_for_test(copilot: dict[str, Any]) -> dict[str, Any]:
    """``copilot`` with the sandbox off when an agent records to a file and it is not named."""
    if "agent_sandbox" in copilot or not records_to_a_file(copilot):
        return copilot
    return {**copilot, "agent_sandbox": "off"}
