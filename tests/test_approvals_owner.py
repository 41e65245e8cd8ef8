"""Only the owner of a call may decide on its approval card (docs/protocol.md section 8).

The server knows three people by token; its authorizer lets alice and bob use Copilot and
not carol. Alice's MCP client proposes an edit: bob (authorized, not the owner) and carol
(not authorized) cannot decide, alice can.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from jupyter_server.auth.authorizer import Authorizer
from jupyter_server.auth.identity import IdentityProvider, User

from tests.mcpclient import mcp_client, mcp_url, structured
from tests.test_approvals import decide, next_of, scene


@pytest.fixture
def url(http_server_client: Any, jp_http_port: int, jp_base_url: str) -> str:
    """The endpoint of the running server (the fixture makes the server listen)."""
    return mcp_url(jp_http_port, jp_base_url)


class NamedTokens(IdentityProvider):
    """Three people, each with a token: ``<name>-token``; the server token still works."""

    async def get_user(self, handler: Any) -> User | None:  # type: ignore[override]
        """The named user of the request's token, else the stock behaviour."""
        header = handler.request.headers.get("Authorization", "")
        for name in ("alice", "bob", "carol"):
            if header == f"token {name}-token":
                handler._token_authenticated = True
                return User(username=name)
        return await super().get_user(handler)  # type: ignore[no-any-return]


class NoCopilotForCarol(Authorizer):
    """Everyone may do everything, except that carol may not use Copilot."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        """Deny carol the ``copilot`` resource."""
        return not (user.username == "carol" and resource == "copilot")


@pytest.fixture
def jp_server_config(jp_server_config: Any) -> Any:
    """This module's server knows alice, bob and carol."""
    jp_server_config.ServerApp.identity_provider_class = NamedTokens
    jp_server_config.ServerApp.authorizer_class = NoCopilotForCarol
    return jp_server_config


async def test_only_the_owner_of_the_call_may_decide(
    jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url, jp_http_port, jp_base_url
) -> None:
    s = await scene(jp_fetch, jp_ws_fetch, jp_root_dir, copilot, url)
    alice = {"Authorization": "token alice-token"}
    async with mcp_client(url, alice) as client:
        call = asyncio.ensure_future(client.call_tool("notebook_edit_cell", s.arguments()))
        card = await next_of(s.page, "approval")
        request_id = card["request"]["requestId"]
        bob = await decide(
            jp_http_port, jp_base_url, {"Authorization": "token bob-token"}, request_id, "allow"
        )
        carol = await decide(
            jp_http_port, jp_base_url, {"Authorization": "token carol-token"}, request_id, "allow"
        )
        assert not call.done() and s.invokes() == []
        owner = await decide(jp_http_port, jp_base_url, alice, request_id, "allow")
        result = await asyncio.wait_for(call, 10)
    assert bob == (403, bob[1]) and bob[1]["error"]["code"] == "denied"
    assert carol[0] == 403
    assert owner == (200, {"requestId": request_id, "outcome": "allowed"})
    assert structured(result)["diffReviewOpened"] is True
    s.page.close()
