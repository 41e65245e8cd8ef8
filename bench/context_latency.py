"""Benchmark jupyter-copilot: get-context latency, `state` messages and start-up JS.

Real ``jupyter lab`` and headless Chromium; sequential get-context calls from Python on one
keep-alive connection, 10 and 2,000 cells, 1 and 10 tabs. Figures are printed beside their
targets; the exit status is 1 only when something is functionally wrong.
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import itertools
import json
import math
import os
import platform
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import nbformat

REPO = Path(__file__).resolve().parent.parent
LABEXTENSION = REPO / "jupyter_copilot" / "labextension"
CHROMIUM = os.environ.get("COPILOT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = shlex.split(
    "--no-sandbox --disable-gpu --disable-dev-shm-usage --disable-background-networking "
    "--disable-component-update --disable-sync --no-first-run"
)
LAB_ARGS = shlex.split(  # split before formatting, so that paths may contain spaces
    "--no-browser --allow-root --ServerApp.ip=127.0.0.1 --ServerApp.port={port} "
    "--ServerApp.port_retries=0 --IdentityProvider.token={token} --ServerApp.root_dir={tmp}/nb "
    "--BaseFileIdManager.db_path={tmp}/fileid.db --LabApp.news_url=None "
    "--LabApp.check_for_updates_class=jupyterlab.handlers.announcements.NeverCheckForUpdate "
    "--LabApp.expose_app_in_browser=True --LabApp.user_settings_dir={tmp}/settings "
    "--LabApp.workspaces_dir={tmp}/workspaces --LabApp.extra_labextensions_path={tmp}/labext"
)
EXTENSIONS = {"jpserver_extensions": {"jupyter_copilot": True, "jupyter_server_fileid": True}}
GET_CONTEXT = "/copilot/api/actions/jupyter_copilot.notebook.get-context"
EXT_URL = "lab/extensions/jupyterlab-agent-review/"
SMALL, LARGE, EXTRAS = "small.ipynb", "large.ipynb", [f"extra{i}.ipynb" for i in range(1, 10)]
STEPS = [  # label, notebooks to open, to close, the active one, its cell to click, tabs open
    ("10 cells, 1 tab", [SMALL], [], SMALL, 4, 1),
    ("2,000 cells, 1 tab", [LARGE], [SMALL], LARGE, 2, 1),
    ("10 cells, 10 tabs", [*EXTRAS, SMALL], [LARGE], SMALL, 4, 10),
    ("2,000 cells, 10 tabs", [LARGE], [SMALL], LARGE, 2, 10),
]
WARMUP, P95_TARGET_MS, RATIO_TARGET, GZ_TARGET_KB = 20, 25.0, 1.5, 30.0
MARK = {True: "ok", False: "MISSED"}  # the verdict printed beside a figure
SHOW_JS = """async ([open, close, active]) => {
  const app = window.jupyterapp, tabs = () => [...app.shell.widgets('main')];
  for (const path of open) {
    await (await app.commands.execute('docmanager:open', {path})).context.ready;
  }
  const closing = () => tabs().filter(w => !w.context || close.includes(w.context.path));
  for (const w of closing()) {
    if (w.context) { w.context.model.dirty = false; }  // kernel info touched the metadata
    w.close();  // or the Launcher
  }
  while (closing().length) { await new Promise(resolve => setTimeout(resolve, 50)); }
  const shown = tabs().find(w => w.context && w.context.path === active);
  app.shell.activateById(shown.id);
  return [shown.id, tabs().length];
}"""
COUNTERS_JS = """() => { const d = document.getElementById('jupyter-copilot-panel').dataset;
  return {changes: +d.stateChanges, sent: +d.stateSent, deduplicated: +d.stateDeduplicated}; }"""
SOURCES_JS = (
    "() => window.jupyterapp.shell.currentWidget.model.sharedModel.cells.map(c => c.source)"
)


class BenchError(Exception):
    """Something is functionally wrong, so the figures would mean nothing."""


@dataclass
class Traffic:
    """What the page sent on its bridge WebSockets, as the browser saw it."""

    opened: int = 0
    closed: int = 0
    sent: list[dict[str, Any]] = field(default_factory=list)

    def count(self, kind: str) -> int:
        """How many messages of one type the page sent."""
        return sum(1 for m in self.sent if m.get("type") == kind)


def make_notebooks(folder: Path) -> dict[str, list[str]]:
    """Write the small, large and extra notebooks; return each one's cell sources."""
    templates = [
        "import numpy as np\nimport pandas as pd\nrng_{i} = np.random.default_rng({i})",
        "df_{i} = pd.read_csv('data/part_{i}.csv')\ndf_{i} = df_{i}.dropna(subset=['price'])"
        "\ndf_{i}.describe()",
        'def mean_{i}(values):\n    """Mean of the values, 0 when empty."""\n'
        "    return sum(values) / max(len(values), 1)",
        "total_{i} = 0\nfor k in range({i} % 97 + 3):\n    total_{i} += k * k\nprint(total_{i})",
        "summary_{i} = {{'rows': len(df_{i}), 'mean': mean_{i}(df_{i}['price'])}}\nsummary_{i}",
    ]
    sources, counts = {}, {SMALL: 10, LARGE: 2000, **dict.fromkeys(EXTRAS, 10)}
    for n, (name, count) in enumerate(counts.items()):
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
        nb.metadata["kernelspec"]["language"] = "python"
        nb.metadata["language_info"] = {"name": "python", "version": platform.python_version()}
        sources[name] = [templates[i % 5].format(i=10_000 * n + i) for i in range(count)]
        nb.cells = [nbformat.v4.new_code_cell(s) for s in sources[name]]
        nbformat.write(nb, folder / name)
    return sources


class Client:
    """One keep-alive HTTP connection to the server, with the token in a header."""

    def __init__(self, port: int, token: str) -> None:
        self.port, self.token = port, token
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers = {"Authorization": f"token {token}", "Content-Type": "application/json"}

    def call(self, method: str, path: str, body: str | None = None) -> tuple[float, int, bytes]:
        """One request: (milliseconds, status, body)."""
        started = time.perf_counter()
        self.conn.request(method, path, body=body, headers=self.headers)
        response = self.conn.getresponse()
        raw = response.read()
        return (time.perf_counter() - started) * 1000.0, response.status, raw

    def get(self, path: str) -> Any:
        """GET a JSON resource; ``None`` unless it answers 200."""
        _, status, raw = self.call("GET", path)
        return json.loads(raw) if status == 200 else None

    def kernels_idle(self) -> bool:
        """Whether every kernel is idle."""
        return all(k["execution_state"] == "idle" for k in self.get("/api/kernels"))

    def selected_source(self, page_id: str) -> tuple[float, str]:
        """One get-context call: (milliseconds, selected cell source); fail loudly without."""
        body = json.dumps({"data": {}, "pageId": page_id})
        ms, status, raw = self.call("POST", GET_CONTEXT, body)
        entries = json.loads(raw)["result"]["customContext"] if status == 200 else []
        cells = [e["value"] for e in entries if e.get("name") == "notebook_selected_cell"]
        if not cells or "source" not in cells[0]:
            raise BenchError(f"get-context: {status} without a selected cell source: {raw[:400]!r}")
        return ms, cells[0]["source"]


def wait_for(check: Callable[[], Any], what: str, timeout: float = 60.0) -> None:
    """Call ``check`` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise BenchError(f"timed out waiting for {what}")
        time.sleep(0.2)


@contextmanager
def lab_server(tmp: Path) -> Iterator[Client]:
    """Start ``jupyter lab`` with isolated Jupyter dirs; stop it however the block ends."""
    settings = tmp / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    notifications = {"fetchNews": "false", "checkForUpdates": False}
    (settings / "notification.jupyterlab-settings").write_text(json.dumps(notifications))
    (tmp / "config").mkdir()
    (tmp / "config" / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": EXTENSIONS})
    )
    (tmp / "labext").mkdir()  # the built extension, whether or not it is installed
    (tmp / "labext" / "jupyterlab-agent-review").symlink_to(LABEXTENSION, target_is_directory=True)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    token, log = secrets.token_hex(24), tmp / "server.log"
    env = dict(os.environ, IPYTHONDIR=f"{tmp}/ipython", JUPYTER_CONFIG_DIR=f"{tmp}/config")
    env.update(JUPYTER_DATA_DIR=f"{tmp}/data", JUPYTER_RUNTIME_DIR=f"{tmp}/runtime")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    args = [arg.format(port=port, token=token, tmp=tmp) for arg in LAB_ARGS]
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "lab", *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its kernels too can be stopped as a group
        )
    try:
        client = Client(port, token)

        def up() -> bool:
            if process.poll() is not None:
                raise BenchError(f"jupyter lab exited:\n{log.read_text()[-3000:]}")
            try:
                return client.get("/api/status") is not None
            except (OSError, http.client.HTTPException):
                client.conn.close()
                return False

        wait_for(up, "GET /api/status", 90)
        if not (client.get("/copilot/api/status") or {}).get("enabled"):
            raise BenchError(f"jupyter-copilot is not enabled:\n{log.read_text()[-3000:]}")
        yield client
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@contextmanager
def lab_page(client: Client, traffic: Traffic) -> Iterator[Any]:
    """Headless Chromium on JupyterLab, recording bridge traffic from the first frame."""
    with lab_pages(client, [traffic]) as pages:
        yield pages[0]


@contextmanager
def lab_pages(client: Client, traffics: list[Traffic]) -> Iterator[list[Any]]:
    """One headless Chromium with a JupyterLab page per traffic record.

    Each page has a browser context (so a renderer process) and a workspace of its own, so
    that one page neither restores the other's tabs nor waits for its main thread.
    """
    from playwright.sync_api import sync_playwright

    def recorder(traffic: Traffic) -> Callable[[Any], None]:
        def on_websocket(ws: Any) -> None:
            if "copilot/api/bridge" in ws.url:
                traffic.opened += 1
                ws.on("close", lambda _: setattr(traffic, "closed", traffic.closed + 1))
                ws.on(
                    "framesent",
                    lambda p: isinstance(p, str) and traffic.sent.append(json.loads(p)),
                )

        return on_websocket

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            pages = []
            for n, traffic in enumerate(traffics):
                page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
                page.on("websocket", recorder(traffic))
                workspace = f"/workspaces/bench-{n}" if n else ""
                page.goto(f"http://127.0.0.1:{client.port}/lab{workspace}?token={client.token}")
                panel = "#jupyter-copilot-panel[data-page-id]"
                page.wait_for_selector(panel, state="attached", timeout=90_000)
                page.evaluate("async () => { await window.jupyterapp.restored; }")
                pages.append(page)
            pages[-1].wait_for_timeout(3000)  # let JupyterLab finish starting up
            yield pages
        finally:
            browser.close()


def prepare(page: Any, client: Client, page_id: str, step: tuple[Any, ...], expected: str) -> None:
    """Open and close notebooks, click one cell of the active one, wait until all is quiet."""
    _, open_, close, active, cell, tabs = step
    widget, count = page.evaluate(SHOW_JS, [open_, close, active])
    if count != tabs:
        raise BenchError(f"expected {tabs} tabs, found {count}")
    editor = page.locator(f"[id='{widget}'] .jp-Cell").nth(cell).locator(".jp-InputArea-editor")
    editor.click(timeout=120_000)
    wait_for(lambda: client.selected_source(page_id)[1] == expected, f"{active} in get-context")
    wait_for(client.kernels_idle, "idle kernels", 120)
    time.sleep(2)


@contextmanager
def main_thread_profile(page: Any) -> Iterator[dict[str, float]]:
    """Sample the page's main thread: its idle share and the time in jupyter-copilot code."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Profiler.enable")
    cdp.send("Profiler.setSamplingInterval", {"interval": 1000})
    cdp.send("Profiler.start")
    result: dict[str, float] = {}
    yield result
    profile = cdp.send("Profiler.stop")["profile"]
    cdp.detach()
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", [])}

    def ours(i: int | None) -> bool:
        while i is not None and EXT_URL not in nodes[i]["callFrame"]["url"]:
            i = parent.get(i)
        return i is not None

    samples = list(zip(profile["samples"], profile["timeDeltas"], strict=True))
    idle = sum(dt for i, dt in samples if nodes[i]["callFrame"]["functionName"] == "(idle)")
    result["idle"] = idle / (sum(dt for _, dt in samples) or 1)
    result["ours_ms"] = sum(dt for i, dt in samples if ours(i)) / 1000


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(math.ceil(p / 100 * len(ordered)) - 1, 0)]


def loaded_files(page: Any) -> list[str]:
    """The jupyter-copilot files the page has loaded so far, by path."""
    urls = page.evaluate("() => performance.getEntriesByType('resource').map(e => e.name)")
    return sorted({urlparse(u).path for u in urls if EXT_URL in u})


def print_files(paths: list[str]) -> float:
    """Print the gzipped size of each built file; return their total in KB."""
    total = 0
    for path in paths:
        data = (LABEXTENSION / path.split(EXT_URL, 1)[1]).read_bytes()
        total += (gz := len(gzip.compress(data, 9)))
        print(f"  {path.rsplit('/', 1)[1]:<34}{len(data) / 1024:>7.1f} KB{gz / 1024:>7.1f} KB gz")
    return total / 1024


def print_startup_js(page: Any) -> None:
    """Print the gzipped size of each jupyter-copilot file the page loaded at start, then of
    those it loads on first use, when the person opens the Copilot panel."""
    print(f"JS loaded at JupyterLab start from {EXT_URL} (gzip -9 of the built files):")
    start = loaded_files(page)
    total = print_files(start)
    ok = MARK[total <= GZ_TARGET_KB]
    print(f"  {'total':<43}{total:>7.1f} KB gz   target <= {GZ_TARGET_KB:g} KB  {ok}")
    page.evaluate("() => window.jupyterapp.shell.activateById('jupyter-copilot-panel')")
    page.wait_for_selector("#jupyter-copilot-panel .jp-Copilot-Chat", timeout=60_000)
    print("JS loaded on first use, when the person opens the Copilot panel:")
    more = print_files([path for path in loaded_files(page) if path not in start])
    print(f"  {'total':<43}{more:>7.1f} KB gz   (the reviews' and runs' code loads later still)")


def print_latency(calls: int, rows: list[tuple[str, list[float], dict[str, float]]]) -> None:
    """Print p50/p95 per scenario and the 2,000-cell/10-cell ratios beside their targets."""
    print(f"\nget-context: {calls} sequential calls per scenario after {WARMUP} warm-up calls")
    print("(page idle: share of the page's main thread left idle during the calls;")
    print(" copilot: page main-thread time spent in jupyter-copilot code)")
    head = f"{'p50 ms':>8}{'p95 ms':>8}{'max ms':>8}{'page idle':>11}{'copilot ms/call':>17}"
    print(f"{'scenario':<22}{head}   target p95 < {P95_TARGET_MS:g} ms")
    p95 = {}
    for label, ms, use in rows:
        p95[label] = percentile(ms, 95)
        figures = f"{percentile(ms, 50):>8.2f}{p95[label]:>8.2f}{max(ms):>8.2f}"
        profile = f"{use['idle']:>10.0%}{use['ours_ms'] / calls:>17.2f}"
        print(f"{label:<22}{figures}{profile}   {MARK[p95[label] < P95_TARGET_MS]}")
    for tabs in ("1 tab", "10 tabs"):
        ratio = p95[f"2,000 cells, {tabs}"] / p95[f"10 cells, {tabs}"]
        target = f"target <= {RATIO_TARGET:g}x  {MARK[ratio <= RATIO_TARGET]}"
        print(f"p95(2,000 cells) / p95(10 cells), {tabs + ':':<8} {ratio:5.2f}x   {target}")


def state_burst(page: Any, traffic: Traffic, moves: int, sources: list[str]) -> None:
    """Move the selected cell (command mode) and the cursor (in an editor); count `state`."""
    cells = itertools.cycle(["ArrowDown"] * 5 + ["ArrowUp"] * 9 + ["ArrowDown"] * 4)  # 4-9-0-4
    cursor = ["ArrowLeft", "ArrowRight", "Home", "End"]
    blocks = [["Escape", *itertools.islice(cells, 4), "Enter", *cursor] for _ in range(moves // 8)]
    page.wait_for_timeout(500)
    sent, before = traffic.count("state"), page.evaluate(COUNTERS_JS)
    started = time.perf_counter()
    for key in itertools.chain.from_iterable(blocks):
        page.keyboard.press(key)
    seconds = time.perf_counter() - started
    page.wait_for_timeout(1000)
    sent, after = traffic.count("state") - sent, page.evaluate(COUNTERS_JS)
    if page.evaluate(SOURCES_JS) != sources:
        raise BenchError("the key presses changed the notebook's cells")
    bound = seconds / 0.1 + 2
    moves = f"{len(blocks) * 8} cell and cursor moves ({len(blocks) * 10} key presses)"
    print(f"\nstate messages: {moves} in {seconds:.1f} s in {SMALL}")
    print(
        f"  `state` sent by the page: {sent}; at most one per 100 ms window would be <= "
        f"{bound:.0f}  {MARK[sent <= bound]}"
    )
    delta = {k: after[k] - before[k] for k in after}
    print(f"  panel counters over the burst: {delta}\n  since the page loaded: {after}")


def run(calls: int, moves: int) -> None:
    """Run every scenario and print the figures as they come."""
    traffic, rows = Traffic(), []
    with tempfile.TemporaryDirectory(prefix="copilot-bench-") as name:
        tmp = Path(name)
        (tmp / "nb").mkdir()
        sources = make_notebooks(tmp / "nb")
        with lab_server(tmp) as client, lab_page(client, traffic) as page:
            print_startup_js(page)
            page_id = page.get_attribute("#jupyter-copilot-panel", "data-page-id")
            for step in STEPS:
                expected = sources[step[3]][step[4]]
                prepare(page, client, page_id, step, expected)
                for _ in range(WARMUP):
                    client.selected_source(page_id)
                with main_thread_profile(page) as use:
                    timed = [client.selected_source(page_id) for _ in range(calls)]
                if any(source != expected for _, source in timed):
                    raise BenchError(f"get-context served another cell than {step[3]}'s")
                rows.append((step[0], [ms for ms, _ in timed], use))
            print_latency(calls, rows)
            step = ("burst", [SMALL], [LARGE], SMALL, 4, 10)
            prepare(page, client, page_id, step, sources[SMALL][4])
            state_burst(page, traffic, moves, sources[SMALL])
            bridge = (traffic.opened, traffic.closed, traffic.count("hello"))
            bridge += (client.get("/copilot/api/status")["pages"],)
    print(
        f"bridge WebSockets: opened {bridge[0]}, closed {bridge[1]}; hello sent {bridge[2]}; "
        f"pages on the server {bridge[3]}  {MARK[bridge == (1, 0, 1, 1)]}"
    )


def main() -> int:
    """Parse arguments and run; exit 1 on a functional failure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, help="calls per scenario (200; 30 with --quick)")
    parser.add_argument("--quick", action="store_true", help="small smoke run for CI")
    args = parser.parse_args()
    started = time.monotonic()
    try:
        run(args.calls or (30 if args.quick else 200), 200 if args.quick else 1000)
    except BenchError as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    print(f"\nrun time {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
