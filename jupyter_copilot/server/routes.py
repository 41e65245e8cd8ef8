"""Every route of the extension, each handler with the collaborators it needs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .agent_handlers import conversation_routes
from .handlers import (
    ActionHandler,
    ApprovalHandler,
    BridgeHandler,
    ManifestHandler,
    McpHandler,
    StatusHandler,
    ToolsHandler,
)
from .history_handlers import history_routes

if TYPE_CHECKING:
    from ..admin.switches import Switches
    from ..agents.conversations import Conversations
    from ..agents.filereviews import FileReviews
    from ..mcp.endpoint import McpEndpoint
    from ..protocol.callers import ExternalGrants
    from ..protocol.registry import CopilotRegistry
    from ..tools.approvals import Approvals
    from ..tools.proposals import ProposalTool
    from .actions import ActionRunner
    from .overview import Overview
    from .pages import Pages


class Collaborators(Protocol):
    """What the routes hand to their handlers; the app (app.py) builds each one."""

    @property
    def switches(self) -> Switches: ...
    @property
    def overview(self) -> Overview: ...
    @property
    def registry(self) -> CopilotRegistry: ...
    @property
    def runner(self) -> ActionRunner: ...
    @property
    def proposal_tools(self) -> Mapping[str, ProposalTool]: ...
    @property
    def pages(self) -> Pages: ...
    @property
    def approvals(self) -> Approvals: ...
    @property
    def mcp(self) -> McpEndpoint: ...
    @property
    def conversations(self) -> Conversations: ...
    @property
    def external(self) -> ExternalGrants: ...
    @property
    def file_reviews(self) -> FileReviews: ...


def handler_routes(app: Collaborators) -> list[tuple[str, type, dict[str, Any]]]:
    """The routes, with what each handler needs from the app's collaborators."""
    switches = app.switches
    return [
        (r"/copilot/api/status", StatusHandler, {"answer": app.overview.status}),
        (r"/copilot/api/manifest", ManifestHandler, {"answer": app.overview.manifest}),
        (r"/copilot/api/tools", ToolsHandler, {"answer": app.overview.tools}),
        (
            r"/copilot/api/actions/(?P<action>[^/]+)",
            ActionHandler,
            {
                "switches": switches,
                "actions": app.registry.actions,
                "runner": app.runner,
                "tools": list(app.proposal_tools.values()),
            },
        ),
        (
            r"/copilot/api/bridge",
            BridgeHandler,
            {
                "switches": switches,
                "open_page": app.pages.open,
                "close_page": app.pages.close,
            },
        ),
        (
            r"/copilot/api/approvals/(?P<request_id>[^/]+)",
            ApprovalHandler,
            {"approvals": app.approvals},
        ),
        (
            r"/copilot/mcp",
            McpHandler,
            {
                "switches": switches,
                "endpoint": app.mcp,
                "by_token": app.conversations.by_token,
                "conversation_caller": app.conversations.caller,
                "external_caller": app.external.caller,
            },
        ),
        *conversation_routes(switches, app.conversations, app.file_reviews),
        *history_routes(switches, app.conversations),
    ]
