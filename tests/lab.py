"""Real JupyterLab in real headless Chromium, served by the pytest-jupyter server.

Browser tests are async functions on the test's event loop, so the Jupyter server and
Playwright's async API share one loop. Chromium is Debian's ``/usr/bin/chromium``; it is
never downloaded.

One Chromium per test process, with a profile of its own: the test process starts Chromium
once, on the first page it opens, with its DevTools port open, and Playwright connects to it
over the DevTools protocol. Chromium stops when the test process ends; if it died, the next
page starts a new one. Playwright's driver (a Node.js process, a third of a CPU-second to
start) and its connection to Chromium belong to the event loop that started them: every
browser test of a test process runs on one event loop (tests/fixtures/browser.py), so one
driver and one connection serve them all. On any other loop, a page gets a driver of that
loop's own.

A page opens in the profile's own browser context, so that what JupyterLab's start costs
Chromium once (its scripts fetched, parsed and compiled) is cached for the next test: the
servers of one test process listen on one port (:func:`lab_port`), so their scripts have
the same addresses. Everything else a page leaves is forgotten when it closes: its cookies,
its site's storage and the permissions granted. A second page open at the same time (two
people, in the collaboration tests) gets a browser context of its own.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from tornado.netutil import bind_sockets
from tornado.testing import bind_unused_port

from tests.eventually import eventually
from tests.kernels import WORKER_PORT_KERNEL_MANAGER
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


#: What Playwright's own launch adds for a headless test browser, as Chromium is started here
#: and not by Playwright: no throttling of pages in the background (two people's pages are
#: open at once), no popup blocking, no extensions or background services, scrollbars hidden
#: and colours fixed for screenshots.
HEADLESS_TEST_ARGS = [
    "--headless",
    "--hide-scrollbars",
    "--mute-audio",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-renderer-backgrounding",
    "--disable-back-forward-cache",
    "--disable-ipc-flooding-protection",
    "--disable-hang-monitor",
    "--disable-popup-blocking",
    "--disable-prompt-on-repost",
    "--disable-breakpad",
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-component-extensions-with-background-pages",
    "--disable-field-trial-config",
    "--disable-search-engine-choice-screen",
    "--no-default-browser-check",
    "--no-service-autorun",
    "--metrics-recording-only",
    "--password-store=basic",
    "--use-mock-keychain",
    "--force-color-profile=srgb",
    "--allow-pre-commit-input",
]


@dataclass
class Chromium:
    """This test process's Chromium: its process, DevTools endpoint and profile folder."""

    process: subprocess.Popen[bytes]
    endpoint: str
    folder: Path
    #: Whether a page is open in the profile's own browser context.
    profile_in_use: bool = False

    def alive(self) -> bool:
        return self.process.poll() is None

    def targets(self) -> str:
        """What Chromium has open (its DevTools HTTP list), for a failure's message."""
        address = self.endpoint.replace("ws://", "http://").split("/devtools/")[0]
        try:
            with urllib.request.urlopen(f"{address}/json/list", timeout=5) as reply:
                return reply.read().decode()  # type: ignore[no-any-return]
        except OSError as error:
            return f"unknown ({error})"

    def stop(self) -> None:
        """End Chromium (its own process group) and remove its profile."""
        if self.alive():
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(10)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        shutil.rmtree(self.folder, ignore_errors=True)


_chromium: Chromium | None = None
#: How many times this test process started Chromium.
chromium_starts = 0


async def chromium() -> Chromium:
    """This test process's Chromium, started on first use and again if it died."""
    global _chromium, chromium_starts
    if _chromium is not None and _chromium.alive():
        return _chromium
    if _chromium is not None:
        _chromium.stop()
    folder = Path(tempfile.mkdtemp(prefix="copilot-chromium-"))
    profile = folder / "profile"
    process = subprocess.Popen(
        [CHROMIUM, *CHROMIUM_ARGS, *HEADLESS_TEST_ARGS]
        + ["--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0"]
        + [f"--user-data-dir={profile}", "about:blank"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    _chromium = Chromium(process, "", folder)
    chromium_starts += 1
    # Chromium writes its DevTools port and browser path here once it listens.
    active = profile / "DevToolsActivePort"
    deadline = time.monotonic() + 60
    while len(lines := (active.read_text().split() if active.exists() else [])) < 2:
        if process.poll() is not None or time.monotonic() > deadline:
            _chromium.stop()
            raise AssertionError(f"Chromium {CHROMIUM} did not open its DevTools port")
        await asyncio.sleep(0.05)
    _chromium.endpoint = f"ws://127.0.0.1:{lines[0]}{lines[1]}"
    return _chromium


@dataclass
class Driver:
    """Playwright's driver on the event loop that started it, and its connection to Chromium."""

    loop: asyncio.AbstractEventLoop
    playwright: Any
    browser: Any = None
    #: The Chromium that ``browser`` is connected to.
    chromium: Chromium | None = None


_driver: Driver | None = None
#: How many times this test process started Playwright's driver.
driver_starts = 0


async def connected() -> tuple[Chromium, Any]:
    """This test process's Chromium and Playwright's connection to it, kept from one page to
    the next on one event loop (see the module's docstring): a new connection when Chromium
    changed or the connection dropped, a new driver on another loop or when it ended."""
    global _driver, driver_starts
    from playwright.async_api import Error as PlaywrightError
    from playwright.async_api import TimeoutError as PlaywrightTimeoutError
    from playwright.async_api import async_playwright

    running = await chromium()
    loop = asyncio.get_running_loop()
    driver = _driver if _driver is not None and _driver.loop is loop else None
    if driver is not None and driver.chromium is running and driver.browser.is_connected():
        return running, driver.browser
    for attempt in range(2):
        if driver is None:
            driver = _driver = Driver(loop, await async_playwright().start())
            driver_starts += 1
        try:
            return running, await connect(driver, running, timeout=20000)
        except PlaywrightTimeoutError:
            # Seen once under load: the connection opened but Chromium never answered.
            # What it had open goes to the test's output; a new Chromium takes its place.
            sys.stderr.write(f"Chromium did not answer; its targets: {running.targets()}\n")
            running.stop()
            running = await chromium()
            return running, await connect(driver, running)
        except PlaywrightError:
            if attempt:
                raise
            driver = None  # the driver ended: a new one
    raise AssertionError("unreachable")


async def connect(driver: Driver, running: Chromium, timeout: float = 30000) -> Any:
    """Connect ``driver`` to ``running`` over the DevTools protocol, in place of the
    connection it had."""
    if driver.browser is not None and driver.browser.is_connected():
        await driver.browser.close()
    driver.browser = None
    driver.browser = await driver.playwright.chromium.connect_over_cdp(
        running.endpoint, timeout=timeout
    )
    driver.chromium = running
    return driver.browser


async def stop_driver() -> None:
    """End the driver this loop started, if any (the end of a test process's browser tests)."""
    global _driver
    driver = _driver
    if driver is None or driver.loop is not asyncio.get_running_loop():
        return
    _driver = None
    await driver.playwright.stop()


@atexit.register
def stop_chromium() -> None:
    """Stop this test process's Chromium, if it started one."""
    if _chromium is not None:
        _chromium.stop()


#: The port every browser test's server of this test process listens on (:func:`lab_port`).
_lab_port: int | None = None


def lab_port() -> tuple[socket.socket, int]:
    """A listening socket for a browser test's server, on this test process's one port.

    JupyterLab's scripts are then at the same addresses from one test to the next, so
    Chromium's caches of them serve every test after the first. Tests run one after the
    other in a test process and each server closes its socket when its test ends. Should
    the port be taken meanwhile, another is chosen for the tests that follow.
    """
    global _lab_port
    if _lab_port is not None:
        try:
            [listener] = bind_sockets(_lab_port, "127.0.0.1", family=socket.AF_INET)
            return listener, _lab_port
        except OSError:
            pass
    listener, _lab_port = bind_unused_port()
    return listener, _lab_port


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


#: JupyterLab's own extensions (and one plugin) that nothing in the browser tests uses, switched
#: off as an admin does (``jupyter labextension disable``: ``labconfig/page_config.json``).
#: Without them a page load costs the machine about 3.3 CPU-seconds, against 3.75 (measured
#: over 11 loads), as fewer plugins start, compile their settings' schemas and follow every
#: notebook change. The Settings Editor, the terminal (a reply's fake link must not open one),
#: the launcher, the console and the cell toolbar stay. The tests of the demo, the first hour
#: and Notebook 7 keep every extension (``every_extension``), so that the panel is seen working
#: next to all that a person's JupyterLab ships.
UNUSED_EXTENSIONS = (
    # Side panels and their services: table of contents, debugger, code intelligence,
    # running sessions, property inspector, help, extension and plugin managers.
    "@jupyterlab/toc-extension",
    "@jupyterlab/debugger-extension",
    "@jupyterlab/lsp-extension",
    "@jupyterlab/running-extension",
    "@jupyterlab/inspector-extension",
    "@jupyterlab/celltags-extension",
    "@jupyterlab/metadataform-extension",
    "@jupyterlab/help-extension",
    "@jupyterlab/extensionmanager-extension",
    "@jupyterlab/pluginmanager-extension",
    "@jupyterlab/logconsole-extension",
    "@jupyterlab/tooltip-extension",
    "@jupyterlab/workspaces-extension",
    "@jupyterlab/hub-extension",
    # Viewers of file types and outputs the tests never show.
    "@jupyterlab/csvviewer-extension",
    "@jupyterlab/htmlviewer-extension",
    "@jupyterlab/imageviewer-extension",
    "@jupyterlab/audio-extension",
    "@jupyterlab/video-extension",
    "@jupyterlab/pdf-extension",
    "@jupyterlab/vega5-extension",
    "@jupyterlab/mermaid-extension",
    # The notebook's "Save and Export Notebook As" menu, which no test opens: on every page
    # load it asks the server for the export formats, and the server answers by loading
    # every nbconvert exporter, about 0.3 CPU-seconds of the test process per page.
    "@jupyterlab/notebook-extension:export",
)


def lab_server_config(
    tmp_path: Path, shared_tmp: Path, copilot: dict[str, Any], *, every_extension: bool = False
) -> dict[str, Any]:
    """Server config for a JupyterLab with jupyter-copilot and no outside traffic; without
    ``UNUSED_EXTENSIONS`` unless ``every_extension``. ``tmp_path`` is the test's: its
    ``config`` folder is the Jupyter config folder pytest-jupyter gives the test."""
    extensions = labextensions_dir(shared_tmp)
    settings = tmp_path / "lab-settings"
    apputils = settings / "@jupyterlab" / "apputils-extension"
    apputils.mkdir(parents=True, exist_ok=True)
    (apputils / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    if not every_extension:
        labconfig = tmp_path / "config" / "labconfig"
        labconfig.mkdir(parents=True, exist_ok=True)
        (labconfig / "page_config.json").write_text(
            json.dumps({"disabledExtensions": dict.fromkeys(UNUSED_EXTENSIONS, True)})
        )
    return {
        "ServerApp": {
            "jpserver_extensions": {
                "jupyterlab": True,
                "jupyter_copilot": True,
                "jupyter_server_fileid": True,
            },
            # No build check: on every page load it asks the server whether JupyterLab needs a
            # rebuild, and the server answers by starting Node.js twice (a version check and
            # yarn's config), about half a CPU-second. Every extension here is prebuilt.
            "tornado_settings": {"page_config_data": {"buildCheck": False}},
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
        # Kernels on ports of this test worker's own (tests/kernels.py).
        "MappingKernelManager": {"kernel_manager_class": WORKER_PORT_KERNEL_MANAGER},
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

    async def extension_on(self, name: str) -> bool:
        """Whether JupyterLab started any plugin of the extension ``name``, or the plugin
        ``name`` (a page of the browser tests starts without ``UNUSED_EXTENSIONS``)."""
        return await self.page.evaluate(  # type: ignore[no-any-return]
            """name => window.jupyterapp.listPlugins().some(
                id => (id === name || id.startsWith(name + ':'))
                    && window.jupyterapp.isPluginActivated(id))""",
            name,
        )

    def notebook(self, path: str) -> Any:
        """A locator for one notebook's panel."""
        return self.page.locator(f"[id='{self.widgets[path]}']")

    async def click_cell(self, path: str, index: int) -> None:
        """Click into a cell's editor, selecting that one cell."""
        cell = self.notebook(path).locator(".jp-Cell").nth(index)
        await cell.locator(".jp-InputArea-editor").click()

    async def kernel_ready(self, path: str, timeout: float = 60) -> None:
        """Wait until the page holds the notebook's kernel, connected and idle.

        The server registers a kernel session before the page has that session, and a run
        JupyterLab is asked for in between runs nothing: ``CodeCell.execute`` clears the cell
        when ``sessionContext.session.kernel`` is not there yet. So a test waits for this
        before it runs a cell itself, as a person waits for the kernel indicator.
        """

        async def ready() -> bool:
            return await self.page.evaluate(  # type: ignore[no-any-return]
                """async id => {
                    const panel = [...window.jupyterapp.shell.widgets('main')]
                        .find(w => w.id === id);
                    await panel.sessionContext.ready;
                    const kernel = panel.sessionContext.session?.kernel;
                    return kernel?.connectionStatus === 'connected' && kernel.status === 'idle';
                }""",
                self.widgets[path],
            )

        await eventually(ready, f"the kernel of {path} in the page", timeout=timeout)

    async def run_cell(self, path: str, index: int, timeout: float = 60) -> None:
        """Run one cell with Shift+Enter once the kernel is ready, and wait until its prompt
        shows an execution count."""
        await self.kernel_ready(path)
        await self.click_cell(path, index)
        await self.page.keyboard.press("Shift+Enter")
        prompt = self.notebook(path).locator(".jp-Cell").nth(index).locator(".jp-InputPrompt")

        async def ran() -> bool:
            text = await prompt.inner_text()
            return "[" in text and "[ ]" not in text and "[*]" not in text

        await eventually(ran, f"cell {index} of {path} to run", timeout=timeout)

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
    """Open JupyterLab at ``path`` in a new page of this process's Chromium and record the
    bridge traffic. The page is closed and its cookies, storage and permissions forgotten
    at the end (see the module's docstring).

    The Copilot panel is only its tab at start; with ``open_panel`` (the default) it is then
    shown, as a person clicks its tab, and its parts have loaded. With ``panel=False`` (the
    feature switch off) it waits for the extension to have read the manifest and for the
    application's main area instead of the Copilot panel. With ``notebook7``, ``path`` opens
    in Jupyter Notebook 7's notebook page (``notebooks/<path>``) instead of JupyterLab.
    """
    require_chromium()
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

    running, browser = await connected()
    shared = not running.profile_in_use
    running.profile_in_use = True
    context = browser.contexts[0]
    before = list(context.pages)
    own: Any = None
    try:
        if not shared:
            context = own = await browser.new_context(viewport={"width": width, "height": 900})
        page = await context.new_page()
        await page.set_viewport_size({"width": width, "height": 900})
        page.on("websocket", on_websocket)
        async with page.expect_response(
            lambda response: "copilot/api/manifest" in response.url, timeout=60000
        ):
            where = f"notebooks/{path}" if notebook7 else f"lab/tree/{path}" if path else "lab"
            await page.goto(f"{base}{where}?token={token}")
        if panel:
            await page.wait_for_selector("#jupyter-copilot-panel", state="attached", timeout=60000)
        else:
            await page.wait_for_selector("#jp-main-dock-panel", timeout=60000)
        await settled(page)
        if panel and open_panel:
            await open_copilot_panel(page)
        yield Lab(page, base, token, traffic)
    finally:
        try:
            if shared:
                await forget_pages(context, before, base)
            elif own is not None:
                await own.close()
        finally:
            if shared:
                running.profile_in_use = False


#: What :func:`forget_pages` clears of a site's data: all but Chromium's caches.
SITE_DATA = "cookies,local_storage,indexeddb,service_workers,cache_storage,file_systems"


async def forget_pages(context: Any, before: list[Any], base: str) -> None:
    """Close the pages opened in the profile's browser context since ``before`` and forget
    what they left: cookies, the site's storage and granted permissions. Chromium's caches
    of the scripts stay, for the next test."""
    pages = [page for page in context.pages if page not in before]
    if pages:
        session = await context.new_cdp_session(pages[0])
        await session.send(
            "Storage.clearDataForOrigin",
            {"origin": "/".join(base.split("/", 3)[:3]), "storageTypes": SITE_DATA},
        )
        await session.detach()
    for page in pages:
        await page.close()
    await context.clear_cookies()
    await context.clear_permissions()


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
