"""The real Gemini CLI in the real side panel: its own write and shell tools, as a person sees them.

The pinned ``gemini --acp`` adapter (``tests/realagents.py``) is discovered on PATH as the
known agent ``gemini`` and talks to a scripted Gemini API on 127.0.0.1
(``tests/scriptedgemini.py``); JupyterLab runs in headless Chromium. In "Ask before edits"
the model calls Gemini's own ``write_file`` for a new file: Gemini asks (a permission card),
the person allows it once, and the write reaches the server as a file review that only Keep
writes. Then the model calls Gemini's own ``run_shell_command``: a card titled with the
command, which the person rejects; the command never runs and the model's reply shows.

Gemini trusts the server's folder only under the sandbox (bubblewrap), so the test needs it
(skipped without it, failed on CI, like a missing npm).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import realagents
from tests import scriptedgemini as gemini
from tests.eventually import eventually
from tests.lab import lab_page
from tests.test_browser_chat import Chat

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out.
pytestmark = pytest.mark.browser

SUMMARY = (
    "# Summary\n"
    "\n"
    "Temperatures rose by **1.2 degrees** in July.\n"
    "\n"
    "- 30 days of data\n"
    "- no missing values\n"
)
REPLY = "I wrote summary.md. You declined the command, so I did not run it."


@pytest.fixture(scope="session")
def adapters_dir() -> Path:
    """The pinned npm adapters (installed once per machine; skipped without npm, not on CI)."""
    return realagents.install_agents()


@pytest.fixture
def copilot_config(adapters_dir: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """No configured agent: the known profiles are discovered on PATH (the adapters first)."""
    bin_dir = adapters_dir / "node_modules" / ".bin"
    monkeypatch.setenv("PATH", os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]))
    # Nothing of the machine's own accounts may reach the agent.
    for name in ("GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    # Gemini looks at a file before it writes it, and without the files grant that look is
    # refused (docs/security.md, "Smaller guarantees"): conversations start with it.
    return {
        "agents": {},
        "discover_agents": True,
        "default_context_refs": ["selected_cell", "files"],
    }


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch, jp_home_dir: Path) -> Iterator[gemini.ScriptedGemini]:
    """The scripted Gemini API, with the server's environment (and so Gemini's) pointing at it."""
    server = gemini.ScriptedGemini()
    server.start_in_thread()
    # Gemini's user settings (telemetry and update checks off) in the agent's HOME.
    realagents.gemini_env(jp_home_dir, server.url)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
    monkeypatch.setenv("GEMINI_API_KEY", "scripted-gemini-key")
    yield server
    server.stop()


@pytest.fixture
def outside() -> Iterator[Path]:
    """A short folder outside the server's root (writable under the sandbox), for a marker."""
    folder = Path(tempfile.mkdtemp(prefix="copilot-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def _file_is(path: Path, text: str) -> bool:
    return path.exists() and path.read_text(encoding="utf-8") == text


@pytest.mark.timeout(300)
async def test_gemini_writes_only_through_a_kept_review_and_a_denied_command_never_runs(
    lab_server,
    jp_fetch,
    jp_root_dir: Path,
    copilot: Any,
    model: gemini.ScriptedGemini,
    outside: Path,
) -> None:
    if not copilot.sandbox.active:
        message = (
            "Gemini CLI trusts the server's folder only under the agent sandbox (bubblewrap), "
            f"which does not work here: {copilot.sandbox.text}"
        )
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    started = time.monotonic()
    summary = jp_root_dir / "summary.md"
    marker = outside / "ran.txt"
    command = f"touch {marker}"
    seen: list[str] = []
    # The command comes only once the review is kept, so that each screenshot shows one thing
    # (Gemini hears that its write succeeded as soon as the review opens).
    kept = threading.Event()

    def step(request: dict[str, Any]) -> gemini.Reply:
        """One model turn, chosen by how many tool results the conversation holds."""
        responses = gemini.function_responses(request)
        seen[:] = [gemini.response_text(r) for r in responses]
        if not responses:
            return gemini.FunctionCall(
                "write_file", {"file_path": str(summary), "content": SUMMARY}
            )
        if len(responses) == 1:
            kept.wait(60)
            return gemini.FunctionCall(
                "run_shell_command", {"command": command, "description": "Mark the run"}
            )
        return REPLY

    model.script = [step] * 10

    try:
        async with lab_page(lab_server) as lab:
            chat = Chat(lab)
            await chat.root.wait_for(state="visible")
            await chat.choose_agent("gemini")
            # "Ask before edits" is the default mode.
            assert await lab.page.locator(".jp-Copilot-ModeSelect").input_value() == "interactive"
            await chat.send("Summarise the July temperatures in summary.md, then mark the run.")

            # Gemini asks before its own write_file: the person allows it once.
            card = lab.page.locator(".jp-Copilot-Approval[data-kind=permission]")
            await card.wait_for(state="visible", timeout=60000)
            assert await card.locator(".jp-Copilot-ApprovalTool").inner_text() == (
                "Writing to summary.md"
            )
            options = card.locator(".jp-Copilot-ApprovalOption")
            assert [await o.get_attribute("data-option-id") for o in await options.all()] == [
                "proceed_always",
                "proceed_once",
                "cancel",
            ]
            await card.locator("[data-option-id='proceed_once']").click()
            await card.wait_for(state="detached", timeout=30000)

            # The write comes back to us as a review of the whole new file: nothing on disk yet.
            review = lab.page.locator(".jp-Copilot-FileReview[data-change=create]")
            await review.wait_for(state="visible", timeout=60000)
            header = await review.locator(".jp-Copilot-FileReviewHeader").inner_text()
            assert header == "Gemini CLI proposes to create summary.md"
            assert not summary.exists()
            assert await card.count() == 0
            await lab.screenshot("copilot-file-review-gemini.png")
            await review.locator(".jp-Copilot-FileReviewKeep").click()
            await eventually(lambda: _file_is(summary, SUMMARY), "Keep to write summary.md", 30)
            await review.wait_for(state="detached", timeout=30000)
            kept.set()

            # Then its own run_shell_command: a card titled with the exact command, rejected.
            card = lab.page.locator(".jp-Copilot-Approval[data-kind=permission]")
            await card.wait_for(state="visible", timeout=60000)
            assert await card.locator(".jp-Copilot-ApprovalTool").inner_text() == command
            # The whole command, in its own block: a title alone could be cut.
            assert await card.locator("pre.jp-Copilot-ApprovalCommand").inner_text() == command
            assert await card.locator("[data-option-id='cancel']").count() == 1
            assert not marker.exists()
            await lab.screenshot("copilot-shell-card-gemini.png")
            await card.locator("[data-option-id='cancel']").click()
            await card.wait_for(state="detached", timeout=30000)

            await chat.idle()
            # The reply, after the write's tool card and the notice of its review.
            message = await chat.last_reply()
            assert "nothing is written until you press Keep" in message, message
            assert (await lab.page.locator(".jp-Copilot-Reply").last.inner_text()).strip() == REPLY
            model.check()
            story = json.dumps({"seen": seen, "requests": len(model.requests)}, default=str)
            # The model saw its write succeed and its command refused; the command never ran.
            assert len(seen) == 2, story
            # (Gemini read the missing file as empty through us, so it says "overwrote".)
            assert seen[0].startswith("Successfully") and str(summary) in seen[0], story
            assert "canceled by the user" in seen[1], story
            assert len(model.requests) == 3, story
            assert not marker.exists(), story
            assert summary.read_text(encoding="utf-8") == SUMMARY
            assert sorted(p.name for p in jp_root_dir.iterdir()) == ["summary.md"]
    finally:
        kept.set()  # a failed test leaves no model request waiting
    print(f"\nreal Gemini CLI in the browser: {time.monotonic() - started:.1f} s")
