"""The README's "Use your own model" commands do what it says.

The key command's ``--CopilotApp.models`` argument, taken from the README as written, is
given to a real server, which offers the model agent it names with the key read from the
variable the README exports. The Ollama command passes no setting: the discovery it relies
on is the default one, tested against a scripted Ollama in tests/test_model_config.py.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.agents.catalog import FromEnv
from jupyter_copilot.agents.models import OLLAMA_URL
from jupyter_copilot.server.app import CopilotApp

README = Path(__file__).resolve().parent.parent / "README.md"


def commands() -> list[list[list[str]]]:
    """Each bash block of the README's "Use your own model", as its commands' words."""
    section = README.read_text(encoding="utf-8").split("### Use your own model", 1)[1]
    section = section.split("\n#", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    return [[shlex.split(line) for line in block.splitlines() if line.strip()] for block in blocks]


def test_the_readme_gives_two_commands_for_ollama_and_two_for_a_key() -> None:
    ollama, key = commands()
    assert len(ollama) == 2 and len(key) == 2
    assert ollama[0][:2] == ["ollama", "pull"]
    assert ollama[1][:2] == ["jupyter", "lab"]
    # No setting: Ollama's models are discovered on its default port.
    assert not [w for w in ollama[1] if w.startswith("--CopilotApp")]
    assert OLLAMA_URL == "http://127.0.0.1:11434"
    assert CopilotApp.discover_models.default_value is None
    assert key[0][0] == "export" and key[0][1].startswith("OPENAI_API_KEY=")
    assert key[1][:2] == ["jupyter", "lab"]


@pytest.fixture
def jp_argv() -> list[str]:
    """The README's setting, as the command line gives it."""
    _, key = commands()
    return [w for w in key[1] if w.startswith("--CopilotApp.")]


@pytest.fixture
def copilot_config() -> dict[str, Any]:
    """Only what the README names is offered (no known agent from this machine's PATH)."""
    return {"discover_agents": False}


async def test_the_key_command_offers_the_model_agent_with_the_exported_key(
    copilot: Any, jp_argv: list[str]
) -> None:
    assert len(jp_argv) == 1
    spec = copilot.conversations.catalog["openai"]
    assert (spec.kind, spec.label, spec.unavailable is None or "Not" in spec.unavailable) == (
        "model",
        "OpenAI",
        True,
    )
    assert spec.env["COPILOT_MODEL_PROVIDER"] == "openai-compatible"
    assert spec.env["COPILOT_MODEL_BASE_URL"] == "https://api.openai.com/v1"
    assert spec.env["COPILOT_MODEL"] == "gpt-4.1-mini"
    assert spec.env["COPILOT_MODEL_API_KEY"] == FromEnv("OPENAI_API_KEY")
    # The model agent comes first: it is a new conversation's agent.
    assert list(copilot.conversations.catalog)[0] == "openai"
