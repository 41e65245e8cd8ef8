"""Model endpoints as agents: ``CopilotApp.models`` entries and a local Ollama (pure, except
:func:`ollama_models`, which asks a local server).

Each entry becomes an agent of the catalog, run as the built-in model agent
(``jupyter_copilot.model_agent``) with the entry in its environment (docs/admin.md,
"Models"). The key is named by ``{"fromEnv": NAME}`` and read from the server's environment
when the agent starts: it reaches that agent's environment and nowhere else.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from traitlets import Dict, TraitError

from ..model_agent.settings import PROVIDERS
from .catalog import AgentConfigError, AgentSpec, EnvValue, FromEnv

#: The model API each provider reaches when an entry gives no ``base_url``.
DEFAULT_HOSTS = {
    "openai": ("api.openai.com",),
    "anthropic": ("api.anthropic.com",),
    "gemini": ("generativelanguage.googleapis.com",),
}

#: The install command the Agent menu shows when the model library is missing.
INSTALL = "pip install 'jupyterlab-agent-review[models]'"

#: Where a local Ollama answers by default.
OLLAMA_URL = "http://127.0.0.1:11434"

#: Seconds a local Ollama has to list its models when the server starts.
OLLAMA_SECONDS = 0.5

#: Keys a ``models`` entry may have.
ENTRY_KEYS = frozenset(
    {
        "label",
        "description",
        "provider",
        "base_url",
        "model",
        "api_key",
        "context_window",
        "max_output_tokens",
        "turn_seconds",
        "images",
    }
)

#: The model agent's command: this server's Python, isolated like the demo agent's.
COMMAND = (sys.executable, "-I", "-m", "jupyter_copilot.model_agent")


def unavailable_reason() -> str | None:
    """Why model agents cannot run with this server's Python, or None when they can."""
    if sys.version_info < (3, 11):
        return "Not available: model agents need Python 3.11 or newer."
    if importlib.util.find_spec("pydantic_ai") is None:
        return f"Not installed: {INSTALL}"
    return None


def parse_model(model_id: Any, entry: Any, unavailable: str | None = None) -> AgentSpec:
    """One ``models`` entry as an agent; raises :class:`AgentConfigError` naming what is wrong.

    Messages name the entry and the key, never a value.
    """
    if not isinstance(model_id, str) or not model_id.strip() or len(model_id) > 64:
        raise AgentConfigError("a model id must be a non-empty string of at most 64 characters")
    if not isinstance(entry, Mapping):
        raise AgentConfigError(f"model '{model_id}' must be a dict")
    if set(entry) - ENTRY_KEYS:
        # Not named: an unknown key can be anything, a key pasted in the wrong place too.
        raise AgentConfigError(
            f"model '{model_id}' has keys other than {', '.join(sorted(ENTRY_KEYS))}"
        )
    provider = entry.get("provider")
    if provider not in PROVIDERS:
        raise AgentConfigError(
            f"model '{model_id}': 'provider' must be one of {', '.join(sorted(PROVIDERS))}"
        )
    model = entry.get("model")
    if not isinstance(model, str) or not model.strip():
        raise AgentConfigError(f"model '{model_id}': 'model' must be a non-empty string")
    env: dict[str, EnvValue] = {
        "COPILOT_MODEL_PROVIDER": provider,
        "COPILOT_MODEL": model,
        # No telemetry of the libraries' own.
        "OTEL_SDK_DISABLED": "true",
        "DO_NOT_TRACK": "1",
    }
    base_url = entry.get("base_url")
    if base_url is not None:
        if not isinstance(base_url, str) or not _is_http_url(base_url):
            raise AgentConfigError(f"model '{model_id}': 'base_url' must be an http(s) URL")
        env["COPILOT_MODEL_BASE_URL"] = base_url
    elif provider in ("openai-compatible", "ollama"):
        raise AgentConfigError(f"model '{model_id}': provider '{provider}' needs a 'base_url'")
    api_key = entry.get("api_key")
    if api_key is not None:
        if not (
            isinstance(api_key, Mapping)
            and set(api_key) == {"fromEnv"}
            and isinstance(api_key["fromEnv"], str)
            and api_key["fromEnv"]
        ):
            raise AgentConfigError(
                f"model '{model_id}': 'api_key' must be {{\"fromEnv\": NAME}} (keys stay out "
                "of config files)"
            )
        env["COPILOT_MODEL_API_KEY"] = FromEnv(api_key["fromEnv"])
    for key, variable in (
        ("context_window", "COPILOT_MODEL_CONTEXT_WINDOW"),
        ("max_output_tokens", "COPILOT_MODEL_MAX_OUTPUT_TOKENS"),
        ("turn_seconds", "COPILOT_MODEL_TURN_SECONDS"),
    ):
        value = entry.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise AgentConfigError(f"model '{model_id}': '{key}' must be a positive number")
        env[variable] = f"{value:g}"
    images = entry.get("images", True)
    if not isinstance(images, bool):
        raise AgentConfigError(f"model '{model_id}': 'images' must be true or false")
    if not images:
        env["COPILOT_MODEL_IMAGES"] = "0"
    label = entry.get("label", model_id)
    description = entry.get("description", "")
    if not isinstance(label, str) or not isinstance(description, str):
        raise AgentConfigError(f"model '{model_id}': 'label' and 'description' must be strings")
    first_line = description.strip().splitlines()[0] if description.strip() else ""
    return AgentSpec(
        model_id,
        label.strip() or model_id,
        unavailable or first_line or f"{model} through the built-in model agent.",
        COMMAND,
        env,
        kind="model",
        private_cwd=True,
        network_hosts=DEFAULT_HOSTS.get(PROVIDERS[provider], ()),
        base_url_env=("COPILOT_MODEL_BASE_URL",),
        unavailable=unavailable,
    )


def _is_http_url(text: str) -> bool:
    try:
        url = urlsplit(text)
    except ValueError:
        return False
    return url.scheme in ("http", "https") and bool(url.hostname) and not url.username


class ModelEntries(Dict):  # type: ignore[type-arg]
    """The ``models`` trait: a dict whose every entry must parse, or the setting is invalid.

    An invalid entry makes the whole setting invalid (it fails closed, docs/admin.md,
    "Invalid settings"); the error names the setting, never a value.
    """

    def validate(self, obj: Any, value: Any) -> Any:
        """The value, if every entry parses."""
        value = super().validate(obj, value)
        for model_id, entry in value.items():
            try:
                parse_model(model_id, entry)
            except AgentConfigError:
                raise TraitError("an entry of CopilotApp.models is invalid") from None
        return value


def ollama_models(base: str = OLLAMA_URL, timeout: float = OLLAMA_SECONDS) -> dict[str, Any]:
    """``models`` entries for each model a local Ollama at ``base`` lists; empty if none answers.

    Asked once, when the server starts (``CopilotApp.discover_models``).
    """
    try:
        with urllib.request.urlopen(f"{base.rstrip('/')}/api/tags", timeout=timeout) as answer:
            listed = json.loads(answer.read(1_000_000))
    except (OSError, ValueError):
        return {}
    entries: dict[str, Any] = {}
    for item in listed.get("models", []) if isinstance(listed, dict) else []:
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str) or not name or len(name) > 56:
            continue
        entries[f"ollama-{name}"] = {
            "label": f"{name} (Ollama)",
            "description": "A model served by the Ollama on this machine.",
            "provider": "ollama",
            "base_url": f"{base.rstrip('/')}/v1",
            "model": name,
        }
    return entries
