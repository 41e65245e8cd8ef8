"""What the side-panel conversations need from the server, read at call time."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..admin.telemetry import Telemetry
from ..page.dispatcher import Dispatcher
from ..protocol.callers import APPROVAL_MODES, CONTEXT_REFS
from ..tools.approvals import Approvals
from .adminpolicy import Policy
from .egress import Network
from .filereviews import FileReviews
from .limits import TurnLimits
from .personalkeys import PersonalKeys
from .sandbox import Sandbox
from .store import ConversationStore


@dataclass
class ConversationsHost:
    """What the conversations need from the server."""

    approvals: Approvals
    dispatcher: Dispatcher
    #: Read one cell of the active notebook live (an attachment).
    read_cell: Callable[[str, str], Awaitable[dict[str, Any]]]
    #: The MCP endpoint's URL as seen from an agent process.
    mcp_url: Callable[[], str]
    #: Whether tools are enabled now (the kill switch is released).
    tools_enabled: Callable[[], bool]
    #: Seconds an agent may sit idle before its process is stopped; 0 keeps it.
    idle_timeout: Callable[[], float]
    #: The directory agents start in: the server's root.
    cwd: str
    telemetry: Telemetry
    log: logging.Logger
    file_reviews: FileReviews
    #: ``CopilotApp.agent_shell`` now: ``ask`` or ``never``.
    shell_policy: Callable[[], str]
    #: Seconds an allowed shell command may run.
    shell_timeout: Callable[[], float]
    sandbox: Sandbox
    #: What a sandboxed agent's network reaches (``egress.py``); None: nothing.
    network: Network | None = None
    #: The names of our MCP tools.
    our_tools: frozenset[str] = frozenset()
    #: The caps on one turn, as configured now.
    limits: Callable[[], TurnLimits] = TurnLimits
    #: How many archived conversations each person keeps, as configured now.
    max_archived: Callable[[], int] = lambda: 50
    #: The active notebook's kernel variables (``page/kernelvars.py``), for ``@`` references.
    variables: Any = None
    #: ``CopilotApp.context_budget_bytes`` now: the largest file or variable a message carries.
    context_budget: Callable[[], int] = lambda: 8192
    #: Read the PNG and JPEG outputs of one cell live (an attachment's plots, ``images.py``).
    read_images: Callable[[str, str, int], Awaitable[list[dict[str, Any]]]] | None = None
    #: ``CopilotApp.agent_image_max_pixels`` now: the longest side of an image sent.
    image_max_pixels: Callable[[], int] = lambda: 1024
    #: Where conversations last (``store.py``); None keeps them in memory only.
    store: ConversationStore | None = None
    #: People's own keys for model endpoints (``personalkeys.py``).
    personal_keys: PersonalKeys | None = None
    #: ``CopilotApp.allow_personal_models`` now.
    allow_personal_models: Callable[[], bool] = lambda: False
    #: The administrator's policy now (``adminpolicy.py``); by default everything is allowed.
    policy: Callable[[], Policy] = lambda: Policy(
        agents=None, modes=APPROVAL_MODES, context_refs=CONTEXT_REFS
    )
