"""Real JupyterLab in real headless Chromium, served by the pytest-jupyter server.

Browser tests are async functions on pytest-jupyter's event loop, so the Jupyter server and
Playwright's async API share one loop. Chromium is Debian's ``/usr/bin/chromium``; it is
never downloaded.

One Chromium per test process, a browser context per page: pytest-jupyter's event loop is
made and closed for each test, and a Playwright connection belongs to the loop that started
it, so Chromium cannot be a Playwright browser kept from one test to the next. Instead
Playwright's own browser server (``playwright launch-server``, the ``launchServer`` of its
Node API, with the same launch options and flags as ``chromium.launch``) starts Chromium once,
on the first page a test process opens, and each :func:`lab_page` connects to it and opens a
new browser context: its own cookies, storage, cache and permissions, closed with the page.
Connecting costs a few hundredths of a second where launching Chromium cost a second under
load. The server stops when the test process ends; if Chromium or the server died, the next
page starts a new one.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.eventually import eventually
from tests.sandboxing import sandbox_for_test

CHROMIUM = os.environ.get("COPILOT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
BRIDGE_PATH = "copilot/api/bridge"
IMAGES = Path(__file__).parent.parent / "docs" / "images"
#: ``COPILOT_SCREENSHOTS=docs`` makes the browser tests retake the docs' screenshots in
#: docs/images; otherwise they go to a folder of the test process's own, removed at its
#: end, so that a test run leaves the checkout as it found it.
SCREENSHOTS_ENV = "COPILOT_SCREENSHOTS"


def require_chromium() -> None:
    """Skip with a clear message when no Chromium exists, except in CI, where it is an error."""
    if Path(CHROMIUM).exists():
        return
    message = (
        f"Browser tests need Chromium at {CHROMIUM} "
        "(apt-get update && apt-get install -y chromium)."
    )
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@dataclass
class BrowserServer:
    """Playwright's browser server running one Chromium, and where to connect to it."""

    process: subprocess.Popen[bytes]
    endpoint: str
    folder: Path

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        """End the server and its Chromium (their own process group)."""
        if self.alive():
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        shutil.rmtree(self.folder, ignore_errors=True)


_browser_server: BrowserServer | None = None
#: How many times this test process started the browser server.
browser_server_starts = 0


async def browser_server() -> BrowserServer:
    """This test process's browser server, started on first use and again if it died."""
    global _browser_server, browser_server_starts
    if _browser_server is not None and _browser_server.alive():
        return _browser_server
    if _browser_server is not None:
        _browser_server.stop()
    folder = Path(tempfile.mkdtemp(prefix="copilot-chromium-"))
    options = folder / "launch.json"
    options.write_text(
        json.dumps({"executablePath": CHROMIUM, "args": CHROMIUM_ARGS, "host": "127.0.0.1"})
    )
    endpoint_file = folder / "endpoint"
    with endpoint_file.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "playwright", "launch-server", "--browser", "chromium"]
            + ["--config", str(options)],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    _browser_server = BrowserServer(process, "", folder)
    browser_server_starts += 1
    deadline = time.monotonic() + 60
    while not (endpoint := endpoint_file.read_text().strip()).startswith("ws://"):
        if process.poll() is not None or time.monotonic() > deadline:
            _browser_server.stop()
            raise AssertionError(f"Playwright's browser server did not start Chromium {CHROMIUM}")
        await asyncio.sleep(0.05)
    _browser_server.endpoint = endpoint.splitlines()[0]
    return _browser_server


@atexit.register
def stop_browser_server() -> None:
    """Stop this test process's Chromium, if it started one."""
    if _browser_server is not None:
        _browser_server.stop()


def labextensions_dir(shared_tmp: Path) -> Path:
    """A folder holding the built lab extension as ``jupyterlab-agent-review`` (its npm name).

    It must be the same folder for every test of a run: JupyterLab's static file handler
    caches resolved paths at class level, across server instances.
    """
    import jupyter_copilot

    built = Path(jupyter_copilot.__file__).parent / "labextension"
    if not (built / "package.json").exists():
        raise AssertionError(
            "The lab extension is not built: install the package from source (pip install .)."
        )
    extensions = shared_tmp / "labextensions"
    extensions.mkdir(exist_ok=True)
    link = extensions / "jupyterlab-agent-review"
    if not link.exists():
        link.symlink_to(built, target_is_directory=True)
    return extensions


def installed_labextensions_dir(shared_tmp: Path, scope: str, probe: str, install: str) -> Path:
    """A folder holding the lab extensions of one npm ``scope`` installed in this Python.

    pytest-jupyter points the Jupyter data path at temporary folders, so JupyterLab does not
    see the extensions installed in this Python's prefix unless they are listed. List it
    after :func:`labextensions_dir`, never instead of it: JupyterLab's static file handler
    caches where it found jupyter-copilot across servers and refuses paths outside the
    current server's folders. ``probe`` is a package.json under the scope that must exist.
    """
    extensions = shared_tmp / f"labextensions-{scope.strip('@')}"
    extensions.mkdir(exist_ok=True)
    installed = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / scope
    if not (installed / probe).exists():
        raise AssertionError(f"The lab extensions of {scope} are missing: {install}.")
    link = extensions / scope
    if not link.exists():
        link.symlink_to(installed, target_is_directory=True)
    return extensions


def collaboration_labextensions_dir(shared_tmp: Path) -> Path:
    """jupyter-collaboration's own lab extensions, for real-time tests."""
    return installed_labextensions_dir(
        shared_tmp, "@jupyter", "docprovider-extension/package.json", "pip install '.[test]'"
    )


def widgets_labextensions_dir(shared_tmp: Path) -> Path:
    """The ipywidgets manager's lab extension, for tests with live widgets."""
    return installed_labextensions_dir(
        shared_tmp, "@jupyter-widgets", "jupyterlab-manager/package.json", "pip install '.[test]'"
    )


def lab_server_config(tmp_path: Path, shared_tmp: Path, copilot: dict[str, Any]) -> dict[str, Any]:
    """Server config for a JupyterLab with jupyter-copilot and no outside traffic."""
    extensions = labextensions_dir(shared_tmp)
    settings = tmp_path / "lab-settings"
    apputils = settings / "@jupyterlab" / "apputils-extension"
    apputils.mkdir(parents=True, exist_ok=True)
    (apputils / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    return {
        "ServerApp": {
            "jpserver_extensions": {
                "jupyterlab": True,
                "jupyter_copilot": True,
                "jupyter_server_fileid": True,
            },
        },
        "BaseFileIdManager": {"db_path": str(tmp_path / "file_id.db")},
        "LabApp": {
            "extra_labextensions_path": [str(extensions)],
            "user_settings_dir": str(settings),
            "workspaces_dir": str(tmp_path / "workspaces"),
            "news_url": None,
            "check_for_updates_class": "jupyterlab.handlers.announcements.NeverCheckForUpdate",
            "expose_app_in_browser": True,
        },
        "CopilotApp": sandbox_for_test(copilot),
    }


@dataclass
class BridgeTraffic:
    """What the page's bridge WebSockets carried, as seen by the browser."""

    opened: int = 0
    closed: int = 0
    sent: list[dict[str, Any]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        """Messages the page sent of one type."""
        return [m for m in self.sent if m.get("type") == kind]

    def received_of_type(self, kind: str) -> list[dict[str, Any]]:
        """Messages the server sent the page, of one type."""
        return [m for m in self.received if m.get("type") == kind]


@dataclass
class Lab:
    """One JupyterLab page in Chromium."""

    page: Any
    base: str
    token: str
    traffic: BridgeTraffic
    widgets: dict[str, str] = field(default_factory=dict)

    async def open(self, path: str) -> None:
        """Open a notebook through JupyterLab's own document manager, as a person's click does."""
        widget_id = await self.page.evaluate(
            """async path => {
                const widget = await window.jupyterapp.commands.execute('docmanager:open', {path});
                await widget.context.ready;
                return widget.id;
            }""",
            path,
        )
        self.widgets[path] = widget_id
        await self.page.wait_for_selector(f"[id='{widget_id}'] .jp-Cell")

    async def page_id(self) -> str:
        """The bridge pageId, as the side panel shows it."""
        element = await self.page.wait_for_selector(
            "#jupyter-copilot-panel[data-page-id]", state="attached"
        )
        return await element.get_attribute("data-page-id")  # type: ignore[no-any-return]

    def notebook(self, path: str) -> Any:
        """A locator for one notebook's panel."""
        return self.page.locator(f"[id='{self.widgets[path]}']")

    async def click_cell(self, path: str, index: int) -> None:
        """Click into a cell's editor, selecting that one cell."""
        cell = self.notebook(path).locator(".jp-Cell").nth(index)
        await cell.locator(".jp-InputArea-editor").click()

    async def select_tab(self, path: str) -> None:
        """Click the notebook's tab in the main area."""
        name = path.rsplit("/", 1)[-1]
        await (
            self.page.locator("#jp-main-dock-panel .lm-TabBar-tab")
            .filter(has_text=name)
            .first.click()
        )

    async def state_selecting(self, cell_id: str) -> dict[str, Any]:
        """The newest state message the page sent with exactly ``cell_id`` selected.

        The browser reports a sent WebSocket frame as an event that may reach the test after
        the server has already acted on that frame, so this waits for it.
        """

        def sent() -> dict[str, Any] | None:
            for message in reversed(self.traffic.of_type("state")):
                active = message["state"].get("activeNotebook") or {}
                if active.get("selectedCellIds") == [cell_id]:
                    return message["state"]  # type: ignore[no-any-return]
            return None

        return await eventually(sent, f"the page's state message selecting cell {cell_id}")

    async def pill(self) -> Any:
        """The pill element, once shown."""
        return await self.page.wait_for_selector(".jp-Copilot-Pill", state="visible")

    async def pill_of(self, index: int) -> Any:
        """The pill once it shows the current notebook's cell ``index``: right after a click
        it may still show the cell that was selected before."""
        cell_id = await self.page.evaluate(
            "i => window.jupyterapp.shell.currentWidget.content.model.cells.get(i).id", index
        )
        return await self.page.wait_for_selector(
            f".jp-Copilot-Pill[data-cell-id='{cell_id}']", state="visible"
        )

    async def screenshot(self, name: str) -> Path:
        """Save a screenshot as ``name`` and return its path: under docs/images with
        ``COPILOT_SCREENSHOTS=docs``, else in :func:`screenshots_dir`."""
        path = screenshots_dir() / name
        await self.page.screenshot(path=str(path))
        return path


_screenshots: Path | None = None


def screenshots_dir() -> Path:
    """Where :meth:`Lab.screenshot` saves (see ``SCREENSHOTS_ENV``)."""
    global _screenshots
    if os.environ.get(SCREENSHOTS_ENV) == "docs":
        IMAGES.mkdir(parents=True, exist_ok=True)
        return IMAGES
    if _screenshots is None:
        _screenshots = Path(tempfile.mkdtemp(prefix="copilot-screenshots-"))
        atexit.register(shutil.rmtree, _screenshots, ignore_errors=True)
    return _screenshots


@asynccontextmanager
async def lab_page(
    serverapp: Any,
    path: str = "",
    *,
    width: int = 1400,
    panel: bool = True,
    open_panel: bool = True,
    notebook7: bool = False,
) -> AsyncIterator[Lab]:
    """Open JupyterLab at ``path`` in a new browser context of this process's Chromium and
    record the bridge traffic.

    The Copilot panel is only its tab at start; with ``open_panel`` (the default) it is then
    shown, as a person clicks its tab, and its parts have loaded. With ``panel=False`` (the
    feature switch off) it waits for the extension to have read the manifest and for the
    application's main area instead of the Copilot panel. With ``notebook7``, ``path`` opens
    in Jupyter Notebook 7's notebook page (``notebooks/<path>``) instead of JupyterLab.
    """
    require_chromium()
    from playwright.async_api import async_playwright

    token = serverapp.identity_provider.token
    base = f"http://127.0.0.1:{serverapp.port}{serverapp.base_url}"
    traffic = BridgeTraffic()

    def on_websocket(ws: Any) -> None:
        if BRIDGE_PATH not in ws.url:
            return
        traffic.opened += 1

        def on_close(_: Any) -> None:
            traffic.closed += 1

        def on_sent(payload: Any) -> None:
            if isinstance(payload, str):
                traffic.sent.append(json.loads(payload))

        def on_received(payload: Any) -> None:
            if isinstance(payload, str):
                traffic.received.append(json.loads(payload))

        ws.on("close", on_close)
        ws.on("framesent", on_sent)
        ws.on("framereceived", on_received)

    server = await browser_server()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.connect(server.endpoint)
        try:
            context = await browser.new_context(viewport={"width": width, "height": 900})
            page = await context.new_page()
            page.on("websocket", on_websocket)
            async with page.expect_response(
                lambda response: "copilot/api/manifest" in response.url, timeout=60000
            ):
                where = f"notebooks/{path}" if notebook7 else f"lab/tree/{path}" if path else "lab"
                await page.goto(f"{base}{where}?token={token}")
            if panel:
                await page.wait_for_selector(
                    "#jupyter-copilot-panel", state="attached", timeout=60000
                )
            else:
                await page.wait_for_selector("#jp-main-dock-panel", timeout=60000)
            await settled(page)
            if panel and open_panel:
                await open_copilot_panel(page)
            yield Lab(page, base, token, traffic)
        finally:
            # Closes this test's contexts and disconnects; Chromium stays for the next test.
            await browser.close()


async def open_copilot_panel(page: Any) -> None:
    """Show the Copilot panel, as a click on its tab does, and wait for its parts to load."""
    await page.evaluate("() => window.jupyterapp.shell.activateById('jupyter-copilot-panel')")
    await page.wait_for_selector(
        "#jupyter-copilot-panel .jp-Copilot-Conversation", state="visible", timeout=60000
    )


#: Whether no file browser is still restoring: JupyterLab marks it ``jp-mod-restoring`` until
#: it has opened the file of the page's address (``lab/tree/<path>``).
RESTORING_DONE = "() => !document.querySelector('.jp-mod-restoring')"


async def settled(page: Any) -> None:
    """Wait until JupyterLab has finished starting, as a person waits for the page.

    ``app.restored`` resolves with the saved layout back, but the file browser restores
    itself later and then opens the file of the page's address and brings its tab to the
    front, seconds later under load: a tab clicked before that would go back by itself.
    """
    await page.evaluate("() => window.jupyterapp.restored")
    await page.wait_for_function(RESTORING_DONE, timeout=60000)


def chromium_path() -> str | None:
    """Where Chromium is, for messages."""
    return CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
