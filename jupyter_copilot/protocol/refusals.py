"""Refusal codes of the public contract, the HTTP status and default text of each.

Every way an action can end without a result is a :class:`Refusal` carrying one of the codes
of docs/protocol.md section 7. The codes, statuses and default texts come from
``schemas/vocabulary.json``, the one source both Python and TypeScript read; nothing else in
the package invents codes. Handlers turn a refusal into ``{"error": {"code", "message"}}``.
"""

from __future__ import annotations

from .vocabulary import VOCABULARY

HTTP_STATUS: dict[str, int] = {
    code: entry["status"] for code, entry in VOCABULARY["refusalCodes"].items()
}
DEFAULT_TEXT: dict[str, str] = {
    code: entry["text"] for code, entry in VOCABULARY["refusalCodes"].items()
}


class Refusal(Exception):
    """An action ended with one of the contract's refusal codes.

    ``message`` is written for a person and must never contain cell source, paths or tokens;
    without one, the code's default text is used.
    """

    def __init__(self, code: str, message: str | None = None) -> None:
        if code not in HTTP_STATUS:
            raise ValueError(f"unknown refusal code {code!r}")
        text = DEFAULT_TEXT[code] if message is None else message
        super().__init__(text)
        self.code = code
        self.message = text

    @property
    def status(self) -> int:
        """The HTTP status that goes with this code."""
        return HTTP_STATUS[self.code]

    def to_json(self) -> dict[str, dict[str, str]]:
        """The refusal as the contract's error body."""
        return {"error": {"code": self.code, "message": self.message}}
