"""Skills through the MCP endpoint: bundled, admin-installed, overridden, unknown, malformed.

The server starts with an admin's skill in the environment's Jupyter data directory (as
`pip`/`conda` installs would put it for every user), a user's override of a bundled skill in
the user data directory, an extra `skills_paths` directory that overrides the admin's skill,
and a malformed SKILL.md that must be skipped with a warning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.mcpclient import mcp_client, mcp_url, refusal_code, structured

ADMIN = """---
id: team-style
title: Team style
description: Follow the team's notebook conventions.
agents: ["*"]
tools: [notebook_read_selected_cell]
---
Admin body: use snake_case.
"""

OVERRIDE = """---
id: team-style
title: Team style (lab override)
description: Follow this lab's conventions instead.
agents: ["*"]
---
Lab body: use camelCase.
"""

USER_CHAT_ONLY = """---
id: chat-only
title: Chat only, the user's way
description: The user's own chat-only skill.
---
User body for chat-only.
"""

CODEX_ONLY = """---
id: codex-tricks
title: Codex tricks
description: Only for the codex agent.
agents: [codex]
---
Codex body.
"""

MALFORMED = """---
id: broken
title: Broken
---
No description in the front matter.
"""


def write_skill(root: Path, folder: str, text: str) -> None:
    """``<root>/<folder>/SKILL.md``."""
    (root / folder).mkdir(parents=True, exist_ok=True)
    (root / folder / "SKILL.md").write_text(text, encoding="utf-8")


@pytest.fixture
def app_log(capfd: pytest.CaptureFixture[str]) -> pytest.CaptureFixture[str]:
    """What the server writes to stderr from before it starts (its log goes there)."""
    return capfd


@pytest.fixture
def copilot_config(
    jp_env_jupyter_path: Path, jp_data_dir: Path, tmp_path: Path, app_log: Any
) -> dict[str, Any]:
    """Skills in every kind of directory, written before the server starts."""
    admin = Path(jp_env_jupyter_path) / "copilot" / "skills"
    write_skill(admin, "team-style", ADMIN)
    write_skill(admin, "codex-tricks", CODEX_ONLY)
    write_skill(admin, "broken", MALFORMED)
    write_skill(Path(jp_data_dir) / "copilot" / "skills", "chat-only", USER_CHAT_ONLY)
    extra = tmp_path / "lab-skills"
    write_skill(extra, "team-style", OVERRIDE)
    return {"skills_paths": [str(extra)]}


@pytest.fixture
def url(http_server_client: Any, jp_http_port: int, jp_base_url: str) -> str:
    """The endpoint of the running server (the fixture makes the server listen)."""
    return mcp_url(jp_http_port, jp_base_url)


async def test_skills_come_from_every_directory_with_later_ones_winning(
    url: str, jp_auth_header: dict[str, str]
) -> None:
    async with mcp_client(url, jp_auth_header, mode="legacy") as client:
        instructions = client.instructions or ""
        bundled = structured(await client.call_tool("skill_read", {"skillId": "read-cells-x"}))
    assert "- read-selected-cell:" in instructions  # bundled
    assert "- team-style: Follow this lab's conventions instead." in instructions
    assert "- chat-only: The user's own chat-only skill." in instructions
    assert "codex-tricks" not in instructions  # another agent's skill
    assert "broken" not in instructions
    assert "Lab body" not in instructions and "Admin body" not in instructions
    assert bundled["error"]["code"] == "unknown-skill"


async def test_skill_read_returns_the_winning_skill_and_its_constraints(
    url: str, jp_auth_header: dict[str, str]
) -> None:
    async with mcp_client(url, jp_auth_header) as client:
        team = structured(await client.call_tool("skill_read", {"skillId": "team-style"}))
        edit = structured(await client.call_tool("skill_read", {"skillId": "propose-cell-edit"}))
        chat = structured(await client.call_tool("skill_read", {"skillId": "chat-only"}))
    assert team == {
        "skillId": "team-style",
        "content": "Lab body: use camelCase.",
        "tools": [],
        "constraints": {"readOnly": True, "requiresContextRefs": []},
    }
    assert edit["tools"] == ["notebook_read_selected_cell", "notebook_edit_cell"]
    assert edit["constraints"] == {"readOnly": False, "requiresContextRefs": ["selected_cell"]}
    assert "stale-source" in edit["content"]
    assert chat["content"] == "User body for chat-only."


@pytest.mark.parametrize("skill_id", ["broken", "codex-tricks", "no-such-skill"])
async def test_unknown_malformed_and_other_agents_skills_are_unknown_skill(
    url: str, jp_auth_header: dict[str, str], skill_id: str
) -> None:
    async with mcp_client(url, jp_auth_header) as client:
        result = await client.call_tool("skill_read", {"skillId": skill_id})
    assert refusal_code(result) == "unknown-skill"


def test_a_malformed_skill_is_skipped_with_a_warning_naming_the_file(
    copilot: Any, app_log: pytest.CaptureFixture[str], jp_env_jupyter_path: Path
) -> None:
    # The server started despite the malformed file.
    assert "broken" not in {s.id for s in copilot.skills.visible("external")}
    logged = app_log.readouterr().err.splitlines()
    [warning] = [line for line in logged if "broken/SKILL.md" in line]
    assert warning.startswith("[W ")
    assert "description" in warning
    assert str(jp_env_jupyter_path) not in warning
