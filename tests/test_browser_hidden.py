"""Cards and diffs that cannot lie, in real JupyterLab (docs/security.md, "Cards and diffs").

Each card and each diff gets a hostile text: a Trojan Source edit of a cell (direction
controls that make a string read as a comment), a file write with direction controls and a
zero-width character in its path, a proposed new cell with a zero-width space, a shell command
with a zero-width character and an ``env`` whose ``PATH`` points at the agent's own ``ls``,
and an agent's own permission request whose title reverses itself. Every hidden character
must show as its escape, ``⟨U+202E⟩``, in its own style, and the reviews say so in words.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_notebook
from tests.conversations import agent_log, scripted_agents
from tests.lab import lab_page
from tests.server import RUN_INVOKE, call_action
from tests.test_browser_chat import Chat
from tests.test_browser_insert import insert, pending_of
from tests.test_browser_review import open_notebook, proposal, propose, review_of, selected_cell

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]

RLO, LRI, PDI, ZWSP, WJ = "\u202e", "\u2066", "\u2069", "\u200b", "\u2060"
#: The Trojan Source paper's Python example: it reads "!= 'none': # Check if admin", but the
#: string goes on to the end of the line and the comparison is always true.
TROJAN = (
    f"if access_level != 'none{RLO}{LRI}': # Check if admin{PDI}{LRI}' and access_level != 'user"
)
CELL_OLD = 'access_level = "user"\nif access_level != "none":  # Check if admin\n    admin()\n'
CELL_NEW = f'access_level = "user"\n{TROJAN}\n    admin()\n'
NOTICE = "This change contains invisible or direction-changing characters, shown as"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """What the scripted agent received."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def copilot_config(log: Path) -> dict[str, Any]:
    """Only the scripted agent."""
    return scripted_agents(log)


def escape(char: str) -> str:
    return f"\u27e8U+{ord(char):04X}\u27e9"


async def escapes(node: Any) -> list[tuple[str, str]]:
    """The escapes under a node, in order: (text, kind)."""
    found = node.locator(".jp-Copilot-HiddenChar")
    return [
        (await e.inner_text(), await e.get_attribute("data-kind") or "") for e in await found.all()
    ]


async def styled(node: Any) -> bool:
    """Whether an escape is drawn in a style of its own: boxed, not as the text around it."""
    return bool(
        await node.evaluate(
            "e => getComputedStyle(e).borderTopStyle === 'solid' && "
            "getComputedStyle(e).unicodeBidi === 'isolate'"
        )
    )


async def test_a_trojan_source_cell_edit_shows_its_direction_controls_in_the_diff(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", ["import os", CELL_OLD.replace("none", f"none{ZWSP}")])
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        status, body = await propose(jp_fetch, proposal(cell, CELL_NEW), "trojan")
        assert status == 200, body
        review = review_of(lab, "trojan")
        await review.wait_for(state="visible")
        notice = review.locator(".jp-Copilot-HiddenNotice")
        text = await notice.inner_text()
        assert text == f"{NOTICE} {escape(ZWSP)}, {escape(RLO)}, {escape(LRI)}."
        # The proposal, in the editor: every control, where it is, as an escape.
        added = review.locator(".cm-content > .cm-line")
        assert await escapes(added) == [
            (escape(RLO), "bidi"),
            (escape(LRI), "bidi"),
            (escape(PDI), "bidi"),
            (escape(LRI), "bidi"),
        ]
        line = await review.locator(".cm-line", has_text="access_level !=").first.inner_text()
        assert line == TROJAN.translate({ord(c): escape(c) for c in (RLO, LRI, PDI)})
        # The removed line, which the merge view draws itself: its zero-width space too.
        removed = review.locator(".cm-deletedChunk")
        assert await escapes(removed) == [(escape(ZWSP), "invisible")]
        assert await styled(added.locator(".jp-Copilot-HiddenChar").first)
        assert await styled(removed.locator(".jp-Copilot-HiddenChar").first)
        # No direction control reached the page's text, so nothing is reordered.
        shown = await review.locator(".jp-Copilot-ReviewDiff").evaluate(
            "e => e.shadowRoot.textContent"
        )
        assert not any(c in shown for c in (RLO, LRI, PDI, ZWSP))
        await lab.screenshot("copilot-hidden-cell-review.png")


async def test_a_pending_cell_shows_its_hidden_characters_in_the_highlighted_source(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", ["import os", "x = 1"])
    source = f"is_admin = user{ZWSP} == 'root'\nprint('ok'){WJ}\n"
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        status, _ = await insert(jp_fetch, cell["artifactId"], cell["cellId"], "new", source=source)
        assert status == 200
        pending = pending_of(lab, "new")
        await pending.wait_for(state="visible")
        text = pending.locator(".jp-Copilot-PendingSource")
        assert await escapes(text) == [(escape(ZWSP), "invisible"), (escape(WJ), "invisible")]
        # Still highlighted as code, with the escapes inside it.
        assert await text.locator("span[class]:not(.jp-Copilot-HiddenChar)").count() >= 3
        assert await text.inner_text() == source.replace(ZWSP, escape(ZWSP)).replace(WJ, escape(WJ))
        assert await styled(text.locator(".jp-Copilot-HiddenChar").first)
        notice = await pending.locator(".jp-Copilot-HiddenNotice").inner_text()
        assert notice == f"{NOTICE} {escape(ZWSP)}, {escape(WJ)}."
        await lab.screenshot("copilot-hidden-pending-cell.png")


async def test_a_file_write_with_direction_controls_shows_them_in_the_file_review(
    lab_server, jp_fetch, jp_root_dir: Path, log: Path
) -> None:
    name = f"check{ZWSP}.py"
    target = jp_root_dir / name
    target.write_text(f'ADMINS = ["alice"]{ZWSP}\naccess_level = "user"\n', encoding="utf-8")
    proposed = f'ADMINS = ["alice"]\naccess_level = "user"\n{TROJAN}\n    admin()\n'
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        await chat.choose_agent("scripted")
        await chat.mode("autopilot")
        await chat.send(f"write {target} {json.dumps(proposed)}")
        review = lab.page.locator(".jp-Copilot-FileReview[data-change=change]")
        await review.wait_for(state="visible", timeout=30000)
        await chat.idle()
        # The path: a zero-width character in a file name shows too.
        path = review.locator(".jp-Copilot-FileReviewPath")
        assert await path.inner_text() == name.replace(ZWSP, escape(ZWSP))
        assert await escapes(path) == [(escape(ZWSP), "invisible")]
        tab = lab.page.locator(".lm-TabBar-tabLabel", has_text="Review: ")
        assert await tab.inner_text() == f"Review: check{escape(ZWSP)}.py"
        notice = await review.locator(".jp-Copilot-HiddenNotice").inner_text()
        assert notice == f"{NOTICE} {escape(ZWSP)}, {escape(RLO)}, {escape(LRI)}."
        added = review.locator(".cm-content > .cm-line")
        assert [e for e, _ in await escapes(added)] == [escape(c) for c in (RLO, LRI, PDI, LRI)]
        removed = review.locator(".cm-deletedChunk")
        assert await escapes(removed) == [(escape(ZWSP), "invisible")]
        await lab.screenshot("copilot-hidden-file-review.png")
        # The turn's notice names the file with its escape too.
        notice = await lab.page.locator(".jp-Copilot-Notice").first.inner_text()
        assert f"change to check{escape(ZWSP)}.py;" in notice
        # Nothing is written before Keep.
        assert ZWSP in target.read_text(encoding="utf-8")


async def test_a_shell_card_shows_the_program_that_runs_the_ignored_env_and_hidden_characters(
    lab_server, jp_fetch, jp_root_dir: Path, tmp_path: Path, log: Path
) -> None:
    planted = tmp_path / "agent-bin"
    planted.mkdir()
    (planted / "ls").write_text(f"#!/bin/sh\ntouch {jp_root_dir / 'PLANTED_RAN.txt'}\n")
    (planted / "ls").chmod(0o755)
    spec = {
        "command": "ls",
        "args": ["-1", f"not{ZWSP}es.txt"],
        "env": {"PATH": str(planted), "LD_PRELOAD": str(planted / "x.so")},
    }
    system_ls = shutil.which("ls")
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        await chat.choose_agent("scripted")
        await chat.send(f"terminal {json.dumps(spec)}")
        card = lab.page.locator(".jp-Copilot-Approval[data-kind=shell]")
        await card.wait_for(state="visible", timeout=30000)
        command = card.locator(".jp-Copilot-ApprovalCommand")
        assert await command.inner_text() == f"ls -1 'not{escape(ZWSP)}es.txt'"
        assert await escapes(command) == [(escape(ZWSP), "invisible")]
        assert await styled(command.locator(".jp-Copilot-HiddenChar"))
        program = await card.locator(".jp-Copilot-ApprovalProgram").inner_text()
        assert program == f"Runs {system_ls}"
        env = await card.locator(".jp-Copilot-ApprovalEnv").inner_text()
        assert env == (
            "Not used: the environment variables the agent set (LD_PRELOAD, PATH). "
            "The command runs with the server's own."
        )
        await lab.screenshot("copilot-hidden-shell-card.png")
        await card.locator(".jp-Copilot-ApprovalAllow").click()
        await chat.idle()
        # What ran is the program the card named, not the agent's own ls.
        done = agent_log(log, "terminal-done")[-1]
        # ls names itself by the path it was run by; the file it was asked for is not there.
        assert done["exitCode"] != 0
        assert done["output"].startswith(f"{system_ls}: cannot access")
        assert not (jp_root_dir / "PLANTED_RAN.txt").exists()

        # An agent's own permission request: its title, reversed by a control, shows as sent.
        await chat.send(f"permission-kind edit Write notes.txt{RLO}exe.bat")
        card = lab.page.locator(".jp-Copilot-Approval[data-kind=permission]")
        await card.wait_for(state="visible", timeout=30000)
        tool = card.locator(".jp-Copilot-ApprovalTool")
        assert await tool.inner_text() == f"Write notes.txt{escape(RLO)}exe.bat"
        assert await escapes(tool) == [(escape(RLO), "bidi")]
        await card.locator("[data-option-id='not-now']").click()
        await chat.idle()
        assert agent_log(log, "permission")[-1]["chose"] == "not-now"


async def test_a_run_card_shows_a_hidden_character_in_the_notebooks_name(
    lab_server, jp_fetch, jp_root_dir: Path
) -> None:
    name = f"re{ZWSP}port.ipynb"
    make_notebook(jp_root_dir, name, ["x = 1", "print(x)"])
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, name)
        cell = await selected_cell(lab, jp_fetch, name, 1)
        data = {k: cell[k] for k in ("artifactId", "cellId", "expectedSourceHash")}
        call = asyncio.ensure_future(
            call_action(jp_fetch, RUN_INVOKE, {"data": data, "callId": "run-hidden"})
        )
        card = lab.page.locator(".jp-Copilot-Approval[data-kind=run]")
        await card.wait_for(state="visible", timeout=30000)
        target = card.locator(".jp-Copilot-ApprovalTarget")
        assert await target.inner_text() == f"Cell 2 of 2 in re{escape(ZWSP)}port.ipynb"
        assert await escapes(target) == [(escape(ZWSP), "invisible")]
        await card.locator(".jp-Copilot-ApprovalDeny").click()
        status, body = await call
        assert body["error"]["code"] == "denied", body


async def test_ask_before_edits_cards_name_the_notebook_with_its_escapes_and_the_review_shows_the_trojan_source(  # noqa: E501
    lab_server, jp_fetch, jp_root_dir: Path, log: Path
) -> None:
    # Cards carry no source (docs/security.md): the notebook's name is what an edit card
    # quotes; the proposal itself shows in the review that opens after Allow once.
    name = f"acc{ZWSP}ess.ipynb"
    make_notebook(jp_root_dir, name, ["import os", CELL_OLD])
    shown_name = f"acc{escape(ZWSP)}ess.ipynb"
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, name)
        cell = await selected_cell(lab, jp_fetch, name, 1)
        chat = Chat(lab)
        await chat.choose_agent("scripted")
        assert await lab.page.locator(".jp-Copilot-ModeSelect").input_value() == "interactive"
        edit = {k: cell[k] for k in ("artifactId", "cellId", "expectedSourceHash")}
        await chat.send(f"mcp notebook_edit_cell {json.dumps({**edit, 'newSource': CELL_NEW})}")
        card = lab.page.locator(".jp-Copilot-Approval[data-state=pending]")
        await card.wait_for(state="visible", timeout=30000)
        tool = card.locator(".jp-Copilot-ApprovalTool")
        assert await tool.inner_text() == "Propose a whole-cell edit"
        target = card.locator(".jp-Copilot-ApprovalTarget")
        assert await target.inner_text() == f"Cell 2 of 2 in {shown_name}"
        assert await escapes(target) == [(escape(ZWSP), "invisible")]
        assert await styled(target.locator(".jp-Copilot-HiddenChar"))
        words = await card.text_content() or ""
        assert not any(c in words for c in (RLO, LRI, PDI, ZWSP))
        await lab.screenshot("copilot-hidden-edit-card.png")
        await card.locator(".jp-Copilot-ApprovalAllow").click()
        # The review after Allow once: the Trojan Source as escapes, and a sentence saying so.
        review = lab.notebook(name).locator(".jp-Copilot-Review")
        await review.wait_for(state="visible", timeout=30000)
        notice = await review.locator(".jp-Copilot-HiddenNotice").inner_text()
        assert notice == f"{NOTICE} {escape(RLO)}, {escape(LRI)}, {escape(PDI)}."
        added = review.locator(".cm-content > .cm-line")
        assert [e for e, _ in await escapes(added)] == [escape(c) for c in (RLO, LRI, PDI, LRI)]
        # The Changes list names the notebook with its escape too.
        row = lab.page.locator(".jp-Copilot-Change[data-kind=edit]")
        await row.wait_for(state="visible")
        link = row.locator(".jp-Copilot-ChangeLink")
        assert await link.inner_text() == f"Edit of cell 2 in {shown_name}"
        assert await escapes(link) == [(escape(ZWSP), "invisible")]
        assert await styled(link.locator(".jp-Copilot-HiddenChar"))
        await lab.screenshot("copilot-hidden-edit-review.png")
        await review.locator(".jp-Copilot-ReviewUndo").click()
        await chat.idle()
    assert RLO not in (jp_root_dir / name).read_text(encoding="utf-8")


async def test_ask_before_edits_insert_card_and_pending_cell_show_the_hidden_characters(
    lab_server, jp_fetch, jp_root_dir: Path, log: Path
) -> None:
    name = f"re{ZWSP}port.ipynb"
    make_notebook(jp_root_dir, name, ["import os", "x = 1"])
    shown_name = f"re{escape(ZWSP)}port.ipynb"
    source = f"if user != 'none{RLO}{LRI}': # admins only{PDI}{LRI}' and user != 'guest':\n    ok{ZWSP}()\n"  # noqa: E501
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, name)
        cell = await selected_cell(lab, jp_fetch, name, 1)
        chat = Chat(lab)
        await chat.choose_agent("scripted")
        data = {
            "artifactId": cell["artifactId"],
            "afterCellId": cell["cellId"],
            "cellType": "code",
            "source": source,
        }
        await chat.send(f"mcp notebook_insert_cell {json.dumps(data)}")
        card = lab.page.locator(".jp-Copilot-Approval[data-state=pending]")
        await card.wait_for(state="visible", timeout=30000)
        tool = card.locator(".jp-Copilot-ApprovalTool")
        assert await tool.inner_text() == "Propose a new cell"
        target = card.locator(".jp-Copilot-ApprovalTarget")
        assert shown_name in await target.inner_text()
        assert await escapes(target) == [(escape(ZWSP), "invisible")]
        words = await card.text_content() or ""
        assert not any(c in words for c in (RLO, LRI, PDI, ZWSP))
        await lab.screenshot("copilot-hidden-insert-card.png")
        await card.locator(".jp-Copilot-ApprovalAllow").click()
        pending = lab.notebook(name).locator(".jp-Copilot-PendingCell")
        await pending.wait_for(state="visible", timeout=30000)
        text = pending.locator(".jp-Copilot-PendingSource")
        assert [e for e, _ in await escapes(text)] == [
            escape(c) for c in (RLO, LRI, PDI, LRI, ZWSP)
        ]
        notice = await pending.locator(".jp-Copilot-HiddenNotice").inner_text()
        assert notice == f"{NOTICE} {escape(RLO)}, {escape(LRI)}, {escape(PDI)}."
        row = lab.page.locator(".jp-Copilot-Change[data-kind=insert] .jp-Copilot-ChangeLink")
        await row.wait_for(state="visible")
        assert await row.inner_text() == f"New cell after cell 2 in {shown_name}"
        assert await escapes(row) == [(escape(ZWSP), "invisible")]
        await lab.screenshot("copilot-hidden-insert-pending.png")
        await pending.locator(".jp-Copilot-ReviewUndo").click()
        await chat.idle()


async def test_the_agents_own_permission_card_shows_its_titles_hidden_characters(
    lab_server, jp_fetch, jp_root_dir: Path, log: Path
) -> None:
    # "notes.txt", then a right-to-left override: "exe.bat" reads as "tab.exe"; a zero-width
    # space hides in "notes".
    title = f"Write no{ZWSP}tes.txt{RLO}exe.bat"
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        await chat.choose_agent("scripted")
        await chat.send(f"permission-kind edit {title}")
        card = lab.page.locator(".jp-Copilot-Approval[data-kind=permission]")
        await card.wait_for(state="visible", timeout=30000)
        tool = card.locator(".jp-Copilot-ApprovalTool")
        assert await tool.inner_text() == f"Write no{escape(ZWSP)}tes.txt{escape(RLO)}exe.bat"
        assert await escapes(tool) == [(escape(ZWSP), "invisible"), (escape(RLO), "bidi")]
        assert await styled(tool.locator(".jp-Copilot-HiddenChar").first)
        words = await card.text_content() or ""
        assert not any(c in words for c in (RLO, ZWSP))
        # The message that asked for it, the person's own, shows its escapes too.
        said = chat.messages("user").last.locator(".jp-Copilot-MessageText")
        assert await escapes(said) == [(escape(ZWSP), "invisible"), (escape(RLO), "bidi")]
        heading = lab.page.locator(".jp-Copilot-ChatTitle")
        assert await escapes(heading) == [(escape(ZWSP), "invisible"), (escape(RLO), "bidi")]
        assert await heading.get_attribute("title") == (
            f"permission-kind edit Write no{escape(ZWSP)}tes.txt{escape(RLO)}exe.bat"
        )
        await lab.screenshot("copilot-hidden-permission-card.png")
        await card.locator("[data-option-id='not-now']").click()
        await chat.idle()
        assert agent_log(log, "permission")[-1]["chose"] == "not-now"


async def test_a_chat_tool_card_shows_the_hidden_characters_of_its_title_and_error(
    lab_server, jp_fetch, jp_root_dir: Path, log: Path
) -> None:
    title = f"Read no{ZWSP}tes.txt{RLO}exe.bat"
    error = f"Access denied{RLO} rof nimda{WJ}\r\nsee the log"
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        await chat.choose_agent("scripted")
        await chat.send(f"tool-call {json.dumps({'title': title, 'error': error})}")
        await chat.idle()
        card = lab.page.locator(".jp-Copilot-ToolCard[data-status=failed]")
        shown = card.locator(".jp-Copilot-ToolCardTitle")
        assert await shown.inner_text() == f"Read no{escape(ZWSP)}tes.txt{escape(RLO)}exe.bat"
        assert await escapes(shown) == [(escape(ZWSP), "invisible"), (escape(RLO), "bidi")]
        assert await styled(shown.locator(".jp-Copilot-HiddenChar").first)
        assert await shown.get_attribute("title") == (
            f"Read no{escape(ZWSP)}tes.txt{escape(RLO)}exe.bat"
        )
        short = card.locator(".jp-Copilot-ToolCardError")
        assert await short.inner_text() == f"Access denied{escape(RLO)} rof nimda{escape(WJ)}"
        await card.locator(".jp-Copilot-ToolCardDetails summary").click()
        full = card.locator(".jp-Copilot-ToolCardFull")
        # A CRLF line break is a line break; every other hidden character an escape.
        assert await escapes(full) == [(escape(RLO), "bidi"), (escape(WJ), "invisible")]
        assert "see the log" in await full.inner_text()
        words = await card.text_content() or ""
        assert not any(c in words for c in (RLO, ZWSP, WJ, "\r"))
        # The title is not cut short: every escape in it shows.
        assert await shown.evaluate("e => e.scrollWidth <= e.clientWidth")
        await lab.screenshot("copilot-hidden-tool-card.png")
