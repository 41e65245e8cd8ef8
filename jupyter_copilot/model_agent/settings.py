"""What one model agent process is started with, read from its environment (pure).

The server writes these variables from one ``CopilotApp.models`` entry (docs/admin.md,
"Models"). The key travels only in ``COPILOT_MODEL_API_KEY``, never on the command line,
which other users of the machine can read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

#: The providers an entry may name, and the wire protocol each speaks.
PROVIDERS = {
    "openai-compatible": "openai",
    "openai": "openai",
    "ollama": "openai",
    "anthropic": "anthropic",
    "gemini": "gemini",
}

#: The context window assumed when neither the entry nor the library knows the model's.
DEFAULT_CONTEXT_WINDOW = 32_768

#: The room kept for the reply when the context window is shared with the request.
DEFAULT_MAX_OUTPUT_TOKENS = 4_096

#: How long one turn may take, in seconds, unless the entry says otherwise.
DEFAULT_TURN_SECONDS = 300.0


@dataclass(frozen=True)
class ModelSettings:
    """One model endpoint, as the agent process uses it."""

    provider: str
    model: str
    base_url: str | None = None
    #: Never in the settings' repr, which a traceback may print.
    api_key: str | None = field(default=None, repr=False)
    context_window: int = DEFAULT_CONTEXT_WINDOW
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    turn_seconds: float = DEFAULT_TURN_SECONDS
    #: Whether the endpoint's model takes images (a cell's plots); an entry's ``images``.
    images: bool = True

    @property
    def protocol(self) -> str:
        """``openai``, ``anthropic`` or ``gemini``."""
        return PROVIDERS[self.provider]

    @property
    def endpoint(self) -> str:
        """Where the endpoint lives, as a person recognises it (``host:port``), never a key."""
        if not self.base_url:
            return {"anthropic": "api.anthropic.com", "gemini": "Google's Gemini API"}.get(
                self.protocol, "api.openai.com"
            )
        parts = urlsplit(self.base_url)
        return parts.netloc.rpartition("@")[2] or self.base_url

    @property
    def input_budget(self) -> int:
        """The most input tokens one request may carry: the window less the reply's room."""
        return max(self.context_window - self.max_output_tokens, 1)


class SettingsError(ValueError):
    """The environment does not describe a usable endpoint; the message says which variable."""


def from_environment(env: Mapping[str, str]) -> ModelSettings:
    """The settings in ``env``; raises :class:`SettingsError` naming a bad variable."""
    provider = env.get("COPILOT_MODEL_PROVIDER", "")
    if provider not in PROVIDERS:
        raise SettingsError("COPILOT_MODEL_PROVIDER names no known provider")
    model = env.get("COPILOT_MODEL", "")
    if not model:
        raise SettingsError("COPILOT_MODEL is empty")
    return ModelSettings(
        provider=provider,
        model=model,
        base_url=env.get("COPILOT_MODEL_BASE_URL") or None,
        api_key=env.get("COPILOT_MODEL_API_KEY") or None,
        context_window=int(_number(env, "COPILOT_MODEL_CONTEXT_WINDOW", DEFAULT_CONTEXT_WINDOW)),
        max_output_tokens=int(
            _number(env, "COPILOT_MODEL_MAX_OUTPUT_TOKENS", DEFAULT_MAX_OUTPUT_TOKENS)
        ),
        turn_seconds=_number(env, "COPILOT_MODEL_TURN_SECONDS", DEFAULT_TURN_SECONDS),
        images=env.get("COPILOT_MODEL_IMAGES", "1") != "0",
    )


def _number(env: Mapping[str, str], name: str, default: float) -> float:
    text = env.get(name)
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        raise SettingsError(f"{name} is not a number") from None
    if not value > 0:
        raise SettingsError(f"{name} must be positive")
    return value
