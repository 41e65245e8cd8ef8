"""The model agent's settings, read from the environment the server writes (pure)."""

from __future__ import annotations

import pytest

from jupyter_copilot.model_agent.settings import SettingsError, from_environment

KEY = "sk-never-shown-4b1f"


def test_the_key_is_read_but_never_in_the_settings_repr() -> None:
    settings = from_environment(
        {
            "COPILOT_MODEL_PROVIDER": "openai-compatible",
            "COPILOT_MODEL": "Qwen/Qwen3-Coder-30B",
            "COPILOT_MODEL_BASE_URL": "http://user:pw@llm.internal:8000/v1",
            "COPILOT_MODEL_API_KEY": KEY,
        }
    )
    assert settings.api_key == KEY
    assert KEY not in repr(settings)
    # The endpoint a person is told about drops any credentials in the URL.
    assert settings.endpoint == "llm.internal:8000"


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"COPILOT_MODEL_PROVIDER": "nope", "COPILOT_MODEL": "m"}, "COPILOT_MODEL_PROVIDER"),
        ({"COPILOT_MODEL_PROVIDER": "openai"}, "COPILOT_MODEL"),
        (
            {
                "COPILOT_MODEL_PROVIDER": "openai",
                "COPILOT_MODEL": "m",
                "COPILOT_MODEL_TURN_SECONDS": "-1",
            },
            "COPILOT_MODEL_TURN_SECONDS",
        ),
    ],
)
def test_a_bad_environment_names_the_variable(env: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError, match=named):
        from_environment(env)
