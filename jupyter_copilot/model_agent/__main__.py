"""Run the built-in model agent over stdio, configured by its environment (``settings.py``)."""

from __future__ import annotations

import asyncio
import logging
import os
import sys

import acp


def main() -> None:
    """Run :class:`~.agent.ModelAgent` on stdin/stdout until the client closes the connection."""
    from .settings import SettingsError, from_environment

    # stdout is the ACP channel: warnings go to stderr, and only this package's logger is set.
    log = logging.getLogger(__package__)
    log.addHandler(logging.StreamHandler(sys.stderr))
    log.setLevel(logging.WARNING)
    try:
        settings = from_environment(os.environ)
    except SettingsError as e:
        sys.exit(f"jupyter-copilot model agent: {e}")
    from .agent import ModelAgent

    asyncio.run(acp.run_agent(ModelAgent(settings)))


if __name__ == "__main__":
    main()
