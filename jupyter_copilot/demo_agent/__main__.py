"""``jupyter-copilot-demo-agent``: run the demo agent over stdio."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

import acp

from .agent import DemoAgent


def main(argv: list[str] | None = None) -> None:
    """Run :class:`DemoAgent` on stdin/stdout until the client closes the connection."""
    parser = argparse.ArgumentParser(
        prog="jupyter-copilot-demo-agent",
        description="The offline, rule-based demo agent of jupyter-copilot (ACP over stdio).",
    )
    parser.add_argument(
        "--chunk-delay",
        type=float,
        default=0.05,
        metavar="SECONDS",
        help="Pause between the streamed parts of a long reply (default: 0.05).",
    )
    args = parser.parse_args(argv)
    # stdout is the ACP channel: the agent's own warnings go to stderr, and nothing less,
    # because a client may never read the agent's stderr pipe. Only this package's logger
    # is set up; the process's root logger is left alone.
    log = logging.getLogger(__package__)
    log.addHandler(logging.StreamHandler(sys.stderr))
    log.setLevel(logging.WARNING)
    asyncio.run(acp.run_agent(DemoAgent(chunk_delay=max(args.chunk_delay, 0.0))))


if __name__ == "__main__":
    main()
