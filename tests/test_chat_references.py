"""Chips a person adds with `@`, Fix or Explain, as the server takes them with a message.

Each chip is read when the message is sent and checked against the conversation's grants
then: a variable needs ``kernel_variables``, a file needs ``files``, an error needs the
administrator to allow ``cell_outputs``. A refused chip refuses the whole message and nothing
reaches the agent. What is allowed reaches the agent as one resource per chip, after the
message. The page is scripted over the real bridge; the agent is the scripted one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.page.context import source_hash
from tests.conversations import agent_log, api, create, end_of, scripted_agents, send
from tests.test_conversations import SOURCE, open_notebook

pytestmark = pytest.mark.shared_kernel


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """Where the scripted agent records what it received."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def copilot_config(request: pytest.FixtureRequest, log: Path) -> dict[str, Any]:
    """Offer only the scripted agent, with the test's policy settings, if any."""
    return {**scripted_agents(log), **getattr(request, "param", {})}


def error_chip(page: Any, **changes: Any) -> dict[str, Any]:
    """The error chip Fix adds for the first cell of the scripted page."""
    return {
        "kind": "error",
        "artifactId": page.artifact_id,
        "cellId": page.cells[0]["cellId"],
        "expectedSourceHash": source_hash(SOURCE),
        "ename": "ValueError",
        "evalue": "bad x",
        "traceback": "Cell In[1], line 2\n----> 2 return x\nValueError: bad x",
        "omitted": {
            "reason": "over-budget",
            "tracebackBytes": 9000,
            "budgetBytes": 8192,
            "linesOmitted": 40,
        },
        **changes,
    }


async def message(jp_fetch: Any, conversation: str, **body: Any) -> tuple[int, dict[str, Any]]:
    """Send a message expected to be refused: its status and refusal."""
    return await api(
        jp_fetch,
        "conversations",
        conversation,
        "messages",
        method="POST",
        body={"text": "reply hi", "pageId": "p-1", **body},
    )


async def test_an_error_chip_reaches_the_agent_after_its_cell_and_says_what_was_left_out(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path
) -> None:
    page = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    conversation = await create(jp_fetch, contextRefs=["selected_cell"])
    events = await send(
        jp_fetch, conversation, "reply fixing", page_id="p-1", references=[error_chip(page)]
    )
    assert end_of(events)["stopReason"] == "end_turn"
    [prompt] = agent_log(log, "prompt")
    text, cell, error = prompt["blocks"]
    assert text == {"type": "text", "text": "reply fixing"}
    assert cell["resource"]["text"] == SOURCE
    assert cell["resource"]["uri"].startswith(f"jupyter-copilot://cell/{page.artifact_id}/")
    assert error["resource"]["uri"] == (
        f"jupyter-copilot://error/{page.artifact_id}/{page.cells[0]['cellId']}"
    )
    assert error["resource"]["text"] == (
        "ValueError: bad x\n\nCell In[1], line 2\n----> 2 return x\nValueError: bad x\n\n"
        "[40 traceback lines (9000 bytes in all) were left out to keep within the context "
        "budget of 8192 bytes.]"
    )
    # The transcript names the error's cell, as it names an attached cell.
    _, detail = await api(jp_fetch, "conversations", conversation)
    assert detail["turns"][0]["user"]["attachment"]["label"] == "Code cell 1"


async def test_an_error_larger_than_the_context_budget_is_over_budget_and_nothing_is_sent(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path
) -> None:
    page = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    conversation = await create(jp_fetch)
    chip = error_chip(page, traceback="x" * 9000, omitted=None)
    status, answer = await message(jp_fetch, conversation, references=[chip])
    assert (status, answer["error"]["code"]) == (400, "over-budget")
    assert agent_log(log, "prompt") == []


@pytest.mark.parametrize(
    "copilot_config",
    [{"allowed_context_refs": ["selected_cell", "active_notebook"]}],
    indirect=True,
)
async def test_an_error_chip_is_not_permitted_when_cell_outputs_are_not_allowed(
    jp_fetch: Any, jp_ws_fetch: Any, jp_root_dir: Path, copilot: Any, log: Path
) -> None:
    page = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, copilot)
    conversation = await create(jp_fetch, contextRefs=["selected_cell"])
    status, answer = await message(jp_fetch, conversation, references=[error_chip(page)])
    assert (status, answer["error"]["code"]) == (403, "not-permitted")
    assert agent_log(log, "prompt") == []


async def test_a_variable_chip_without_the_kernel_variables_grant_is_blocked(
    jp_fetch: Any, log: Path
) -> None:
    conversation = await create(jp_fetch, contextRefs=["selected_cell"])
    chip = {"kind": "variable", "name": "df"}
    status, answer = await message(jp_fetch, conversation, references=[chip])
    assert (status, answer["error"]["code"]) == (403, "blocked")
    assert agent_log(log, "prompt") == []


async def test_a_file_chip_needs_the_files_grant_and_never_reads_a_notebook(
    jp_fetch: Any, jp_root_dir: Path, log: Path
) -> None:
    (jp_root_dir / "notes.txt").write_text("sales rose in May\n", encoding="utf-8")
    (jp_root_dir / "big.txt").write_text("x" * 9000, encoding="utf-8")
    (jp_root_dir / "n.ipynb").write_text("{}", encoding="utf-8")
    chip = {"kind": "file", "path": "notes.txt"}
    ungranted = await create(jp_fetch, contextRefs=["selected_cell"])
    status, answer = await message(jp_fetch, ungranted, references=[chip])
    assert (status, answer["error"]["code"]) == (403, "blocked")

    conversation = await create(jp_fetch, contextRefs=["selected_cell", "files"])
    for path, code in (
        ("n.ipynb", (409, "notebook-file")),
        ("../outside.txt", (403, "outside-root")),
        ("big.txt", (400, "over-budget")),
    ):
        status, answer = await message(
            jp_fetch, conversation, references=[{"kind": "file", "path": path}]
        )
        assert (status, answer["error"]["code"]) == code, path
    assert agent_log(log, "prompt") == []

    events = await send(jp_fetch, conversation, "reply read", references=[chip])
    assert end_of(events)["stopReason"] == "end_turn"
    [prompt] = agent_log(log, "prompt")
    [_, resource] = prompt["blocks"]
    assert resource["resource"]["uri"] == "jupyter-copilot://file/notes.txt"
    assert resource["resource"]["text"] == "sales rose in May\n"


@pytest.mark.parametrize(
    "references",
    [
        "df",
        [{"kind": "variable"}],
        [{"kind": "variable", "name": "df", "extra": 1}],
        [{"kind": "unknown"}],
        [{"kind": "file", "path": "/"}],
        [{"kind": "cell", "artifactId": "a", "cellId": ""}],
        [{"kind": "variable", "name": "df"}] * 9,
    ],
)
async def test_malformed_chips_are_invalid_input_and_nothing_reaches_the_agent(
    jp_fetch: Any, log: Path, references: Any
) -> None:
    conversation = await create(jp_fetch)
    status, answer = await message(jp_fetch, conversation, references=references)
    assert (status, answer["error"]["code"]) == (400, "invalid-input")
    assert agent_log(log) == []


@pytest.mark.parametrize(
    "copilot_config", [{"allowed_context_refs": ["selected_cell"]}], indirect=True
)
async def test_the_variable_list_is_not_permitted_when_kernel_variables_are_not_allowed(
    jp_fetch: Any,
) -> None:
    status, answer = await api(jp_fetch, "variables")
    assert (status, answer["error"]["code"]) == (403, "not-permitted")


async def test_the_variable_list_needs_an_active_notebook(jp_fetch: Any) -> None:
    status, answer = await api(jp_fetch, "variables")
    assert (status, answer["error"]["code"]) == (404, "no-active-page")
