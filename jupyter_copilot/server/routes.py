"""Every route of the extension, each handler with the collaborators it needs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from .app import CopilotApp


def handler_routes(app: CopilotApp) -> list[tuple[str, type, dict[str, Any]]]:
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
    ]
