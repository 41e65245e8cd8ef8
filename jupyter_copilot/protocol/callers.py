"""Who calls an action or a tool, and what that caller may read (docs/protocol.md section 8).

One caller type for every path: the person's own JupyterLab page over REST, an outside MCP
client, a side-panel conversation's agent. A caller is built afresh for every HTTP request
from the server's own records (the configuration for outside clients, the conversation for
side-panel agents); nothing a client claims about itself widens what it may read.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from jupyter_server.auth.identity import IdentityProvider, PasswordIdentityProvider

from . import vocabulary
from .refusals import Refusal

SELECTED_CELL = "selected_cell"
ACTIVE_NOTEBOOK = "active_notebook"
CELL_OUTPUTS = "cell_outputs"
#: Reads of non-notebook files under the server's root, through an agent's own file tools.
FILES = "files"
#: The variables of the active notebook's kernel, listed and described (protocol 11.3).
KERNEL_VARIABLES = "kernel_variables"
#: The references that read the notebook, which outside MCP clients can be granted too.
NOTEBOOK_REFS = vocabulary.NOTEBOOK_REFS
#: Every context reference, in the order they are documented (vocabulary ``contextRefs``).
CONTEXT_REFS = vocabulary.CONTEXT_REFS

PLAN = "plan"
INTERACTIVE = "interactive"
AUTOPILOT = "autopilot"
#: The approval modes of docs/protocol.md section 8 (vocabulary ``approvalModes``).
APPROVAL_MODES = vocabulary.APPROVAL_MODES

#: The agent id of MCP clients that are not side-panel conversations.
EXTERNAL_AGENT = "external"

#: Caller kinds: the person's own page (REST), an outside MCP client, a conversation's agent.
PAGE = "page"
EXTERNAL = "external"
CONVERSATION = "conversation"

#: Identity providers of a single-user server: whoever gets past them is the server's owner.
#: They give a token-authenticated request a new anonymous name each time, so names cannot
#: tell one person from another there.
_SINGLE_USER_PROVIDERS = (IdentityProvider, PasswordIdentityProvider)

_WHAT_REFS_ALLOW = {
    SELECTED_CELL: "the selected cell",
    ACTIVE_NOTEBOOK: "the whole active notebook",
    CELL_OUTPUTS: "cell outputs",
    FILES: "files in the server's folder",
    KERNEL_VARIABLES: "the notebook's kernel variables",
}


@dataclass(frozen=True)
class Caller:
    """One caller, as the server sees it for one request.

    The person's own page calls with the defaults: it reads through get-context only, and
    the review is the person's decision (``autopilot``). MCP callers carry their grants and
    approval mode: ``plan`` refuses edits, ``interactive`` shows a card before each edit.
    """

    #: The server's authorizer: may this caller's user write notebooks?
    may_write: Callable[[], Awaitable[bool]]
    #: :data:`PAGE`, :data:`EXTERNAL` (an outside MCP client) or :data:`CONVERSATION`.
    kind: str = PAGE
    #: Who owns the caller's calls: only this principal may approve them.
    principal: str = "owner"
    #: The agent id that skills are filtered by.
    agent: str = EXTERNAL_AGENT
    context_refs: frozenset[str] = frozenset()
    approval_mode: str = AUTOPILOT
    #: The conversation id of a side-panel agent; empty for other callers.
    scope: str = ""

    @property
    def session_key(self) -> str:
        """What an MCP session is bound to: a session opened by one caller serves no other."""
        return f"{self.kind}:{self.principal}:{self.scope}"

    def require(self, ref: str) -> None:
        """Refuse with ``blocked`` unless the caller was granted ``ref``."""
        if ref not in self.context_refs:
            raise Refusal(
                "blocked",
                f"Reading {_WHAT_REFS_ALLOW[ref]} was not allowed for this caller "
                f"(context reference '{ref}' not granted).",
            )

    def grants_json(self) -> dict[str, Any]:
        """The caller's grants as tools report them."""
        return {
            "contextRefs": [ref for ref in CONTEXT_REFS if ref in self.context_refs],
            "approvalMode": self.approval_mode,
        }


@dataclass(frozen=True)
class ExternalGrants:
    """What outside MCP clients are granted, read from the configuration at call time."""

    #: ``CopilotApp.external_context_refs`` now.
    context_refs: Callable[[], Iterable[str]]
    #: ``CopilotApp.external_approval_mode`` now.
    approval_mode: Callable[[], str]

    def caller(self, principal: str, may_write: Callable[[], Awaitable[bool]]) -> Caller:
        """An outside MCP client's caller, with the grants configured now."""
        return Caller(
            kind=EXTERNAL,
            principal=principal,
            agent=EXTERNAL_AGENT,
            context_refs=frozenset(self.context_refs()),
            approval_mode=self.approval_mode(),
            may_write=may_write,
        )


def principal_of(identity_provider: Any, user: Any) -> str:
    """The principal a request acts for, for deciding who may approve a call.

    On a single-user server every authenticated request is the owner's. With any other
    identity provider (JupyterHub, a custom one) users are told apart by name.
    """
    if type(identity_provider) in _SINGLE_USER_PROVIDERS:
        return "owner"
    return f"user:{getattr(user, 'username', '')}"
