"""The endpoint's failures in plain words (pure: no model library is imported here).

Each failure has a kind; the turn ends with its sentence as its error text, and the kind
(with the HTTP status) in the reply's ``_meta`` (docs/protocol.md, "The built-in model
agent"). Nothing the endpoint wrote is repeated: its messages can echo part of the key.
"""

from __future__ import annotations

from .settings import ModelSettings

#: The ``_meta`` key of a prompt response that carries the failure.
ERROR_META = "jupyter-copilot/error"

#: The ``_meta`` key of a prompt response that carries the turn's token counts.
USAGE_META = "jupyter-copilot/usage"


def failure_text(kind: str, settings: ModelSettings, status: int | None = None) -> str:
    """What the person reads when a turn fails with ``kind``."""
    where = settings.endpoint
    if kind == "auth":
        return (
            f"The model endpoint at {where} refused the key (HTTP {status or 401}). "
            "Ask your administrator to check the key."
        )
    if kind == "not-found":
        return (
            f"The model endpoint at {where} has no model named '{settings.model}' (HTTP 404). "
            "Check the model name."
        )
    if kind == "rate-limited":
        return (
            f"The model endpoint at {where} is rate-limiting requests (HTTP 429). Wait a "
            "moment and send your message again."
        )
    if kind == "unreachable":
        return f"The model endpoint at {where} cannot be reached: is it running?"
    if kind == "timeout":
        return (
            f"The model took longer than {settings.turn_seconds:g} seconds for this message; "
            "it was stopped."
        )
    if kind == "context":
        return (
            "This conversation no longer fits the model's context window "
            f"({settings.context_window} tokens). Start a new conversation."
        )
    if status is not None:
        return f"The model endpoint at {where} answered with an error (HTTP {status})."
    return f"The model endpoint at {where} failed to answer."
