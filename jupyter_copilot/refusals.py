"""Refusal codes of the public contract and the HTTP status each one maps to.

Every way an action can end without a result is a :class:`Refusal` carrying one of the codes
of docs/protocol.md section 7. Handlers turn it into ``{"error": {"code", "message"}}`` with the
status below; nothing else in the package invents codes.
"""

from __future__ import annotations

HTTP_STATUS: dict[str, int] = {
    "invalid-input": 400,
    "over-budget": 400,
    "read-only": 403,
    "cell-locked": 403,
    "denied": 403,
    "blocked": 403,
    "outside-root": 403,
    "not-permitted": 403,
    "unknown-action": 404,
    "no-active-page": 404,
    "cell-not-found": 404,
    "unknown-skill": 404,
    "unknown-conversation": 404,
    "ambiguous-active-notebook": 409,
    "not-authoring-view": 409,
    "artifact-mismatch": 409,
    "no-active-session": 409,
    "cell-type-mismatch": 409,
    "stale-source": 409,
    "diff-unavailable": 409,
    "plan-mode": 409,
    "aborted": 409,
    "notebook-file": 409,
    "conversation-busy": 409,
    "kill-switch": 503,
    "feature-disabled": 503,
    "timeout": 504,
}


class Refusal(Exception):
    """An action ended with one of the contract's refusal codes.

    ``message`` is written for a person and must never contain cell source, paths or tokens.
    """

    def __init__(self, code: str, message: str) -> None:
        if code not in HTTP_STATUS:
            raise ValueError(f"unknown refusal code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def status(self) -> int:
        """The HTTP status that goes with this code."""
        return HTTP_STATUS[self.code]

    def to_json(self) -> dict[str, dict[str, str]]:
        """The refusal as the contract's error body."""
        return {"error": {"code": self.code, "message": self.message}}
