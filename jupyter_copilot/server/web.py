"""What every HTTP handler of the extension shares.

Handlers parse, authorize and delegate. A :class:`Refusal` raised anywhere in a handler (bad
input included) is answered as ``{"error": {"code", "message"}}`` with its status
(docs/protocol.md sections 4 and 7), never as a 500; :func:`gated` checks the switches of
``switches.py``; :meth:`CopilotHandler.json_body` is the one reader of JSON bodies. Each
handler receives its collaborators as route kwargs through ``initialize()``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any

from jupyter_core.utils import ensure_async
from jupyter_server.base.handlers import APIHandler

from ..admin.switches import Switches
from ..protocol import jsontext
from ..protocol.callers import principal_of
from ..protocol.refusals import Refusal

AUTH_RESOURCE = "copilot"


class RefusalAnswers:
    """Mixin of a tornado handler: a raised :class:`Refusal` is the contract's error answer."""

    def log_exception(self, typ: Any, value: Any, tb: Any) -> None:
        """A refusal is an answer, not a server fault: nothing to log."""
        if isinstance(value, Refusal):
            return
        super().log_exception(typ, value, tb)  # type: ignore[misc]

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        """Answer a refusal with its status and body; anything else as the base does."""
        error = kwargs.get("exc_info", (None, None, None))[1]
        handler: Any = self
        if isinstance(error, Refusal):
            handler.set_status(error.status)
            handler.set_header("Content-Type", "application/json")
            handler.finish(json.dumps(error.to_json()))
            return
        super().write_error(status_code, **kwargs)  # type: ignore[misc]


class CopilotHandler(RefusalAnswers, APIHandler):
    """Base of the REST endpoints."""

    auth_resource = AUTH_RESOURCE
    switches: Switches

    def json_body(self) -> dict[str, Any]:
        """The request body as a JSON object (an empty body is ``{}``), or ``invalid-input``."""
        try:
            body = jsontext.parse(self.request.body or b"{}")
        except jsontext.BadJson as e:
            raise Refusal("invalid-input", str(e)) from None
        if not isinstance(body, dict):
            raise Refusal("invalid-input", "The request body must be a JSON object.")
        return body

    def reply(self, body: dict[str, Any], status: int = 200) -> None:
        """Finish with a JSON body."""
        self.set_status(status)
        self.finish(json.dumps(body, ensure_ascii=False))

    @property
    def principal(self) -> str:
        """Who this request acts for (docs/protocol.md section 8)."""
        return principal_of(self.identity_provider, self.current_user)

    async def may(self, action: str) -> bool:
        """Whether the server's authorizer lets this user ``action`` files (contents)."""
        return bool(
            await ensure_async(
                self.authorizer.is_authorized(self, self.current_user, action, "contents")
            )
        )

    async def may_write(self) -> bool:
        """Whether the server's authorizer lets this user write notebooks."""
        return await self.may("write")


Method = Callable[..., Any]


def gated(gate: str | Callable[..., str]) -> Callable[[Method], Callable[..., Awaitable[Any]]]:
    """Check the switches before the handler method runs.

    ``gate`` is a gate of ``switches.py``, or a function of the method's path arguments
    that returns one. Put it under the authentication and authorization decorators.
    """

    def decorate(method: Method) -> Callable[..., Awaitable[Any]]:
        @functools.wraps(method)
        async def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            self.switches.require(gate(*args, **kwargs) if callable(gate) else gate)
            return await ensure_async(method(self, *args, **kwargs))

        return wrapper

    return decorate
