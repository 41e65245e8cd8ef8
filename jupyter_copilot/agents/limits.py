"""What one turn of a conversation may hold: the bounds the agent's process enforces too."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TurnLimits:
    """What one turn may hold, so that no agent can fill the server's memory."""

    #: UTF-8 bytes of reply text.
    reply_bytes: int = 1024 * 1024
    #: Stream events (text chunks, tool call updates, notices).
    events: int = 10_000
    #: Seconds the agent may take for one message.
    turn_seconds: float = 1800.0
    #: Bytes of one line the agent writes on stdout (one ACP message); past it the agent
    #: is stopped. A whole notebook cell or file in one message needs more than 64 KiB.
    line_bytes: int = 16 * 1024 * 1024
