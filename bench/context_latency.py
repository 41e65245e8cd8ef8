"""Benchmark: get-context latency, state messages and start-up JS of jupyter-copilot.

Runs a real ``jupyter lab`` and headless Chromium (Debian's ``/usr/bin/chromium``), then
times sequential ``get-context`` calls from Python over one keep-alive connection for a
10-cell and a 2,000-cell notebook, with 1 and with 10 notebook tabs open. It prints figures
beside their targets and exits 0 unless something is functionally wrong.

    python bench/context_latency.py [--calls N] [--quick]
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import json
import math
import os
import platform
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import nbformat

REPO = Path(__file__).resolve().parent.parent
LABEXTENSION = REPO / "jupyter_copilot" / "labextension"
CHROMIUM = os.environ.get("COPILOT_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
GET_CONTEXT = "/copilot/api/actions/jupyter_copilot.notebook.get-context"
EXTENSION_URL = "lab/extensions/jupyter-copilot/"
EXTRAS = [f"extra{i}.ipynb" for i in range(1, 10)]
SMALL, LARGE, SMALL_CELL, LARGE_CELL = "small.ipynb", "large.ipynb", 4, 2
P95_TARGET_MS, RATIO_TARGET, GZ_TARGET_KB, WARMUP = 25.0, 1.5, 50.0, 5
OPEN_JS = """async paths => {
  const ids = [];
  for (const path of paths) {
    const w = await window.jupyterapp.commands.execute('docmanager:open', {path});
    await w.context.ready;
    ids.push(w.id);
  }
  return ids;
}"""
CLOSE_JS = """paths => { for (const w of [...window.jupyterapp.shell.widgets('main')]) {
  if (!w.context) { w.close(); }  // the Launcher
  else if (paths.includes(w.context.path)) { w.context.model.dirty = false; w.close(); } } }"""
TABS_JS = "() => [...window.jupyterapp.shell.widgets('main')].length"
COUNTERS_JS = """() => { const d = document.getElementById('jupyter-copilot-panel').dataset;
  return {changes: +d.stateChanges, sent: +d.stateSent, deduplicated: +d.stateDeduplicated,
          watchers: +d.notebookWatchers}; }"""
RESOURCES_JS = "() => performance.getEntriesByType('resource').map(e => e.name)"


class BenchError(Exception):
    """Something is functionally wrong: the benchmark cannot give meaningful figures."""


@dataclass
class Server:
    """A running ``jupyter lab``."""

    port: int
    token: str
    log: Path


@dataclass
class Traffic:
    """Messages the page sent on its bridge WebSockets, as the browser saw them."""

    opened: int = 0
    closed: int = 0
    sent: list[dict[str, Any]] = field(default_factory=list)

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        """Messages of one type."""
        return [m for m in self.sent if m.get("type") == kind]


def cell_source(i: int) -> str:
    """A few lines of realistic, distinct Python for cell ``i``."""
    templates = [
        "import numpy as np\nimport pandas as pd\nrng_{i} = np.random.default_rng({i})",
        "df_{i} = pd.read_csv('data/part_{i}.csv')\ndf_{i} = df_{i}.dropna(subset=['price'])\n"
        "df_{i}.describe()",
        "def mean_{i}(values):\n    \"\"\"Mean of the values, or 0 when empty.\"\"\"\n"
        "    return sum(values) / max(len(values), 1)",
        "total_{i} = 0\nfor k in range({i} % 97 + 3):\n    total_{i} += k * k\nprint(total_{i})",
        "summary_{i} = {{'rows': len(df_{i}), 'mean': mean_{i}(df_{i}['price'])}}\nsummary_{i}",
    ]
    return templates[i % len(templates)].format(i=i)


def make_notebooks(folder: Path) -> dict[str, list[str]]:
    """Write the small, large and extra notebooks; return each one's cell sources."""
    counts = {SMALL: 10, LARGE: 2000, **{name: 10 for name in EXTRAS}}
    sources = {}
    for n, (name, count) in enumerate(counts.items()):
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                     "language": "python"}
        nb.metadata["language_info"] = {"name": "python", "version": platform.python_version()}
        sources[name] = [cell_source(i + 100 * n) for i in range(count)]
        nb.cells = [nbformat.v4.new_code_cell(s) for s in sources[name]]
        nbformat.write(nb, folder / name)
    return sources


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def lab_server(tmp: Path, root: Path) -> Iterator[Server]:
    """Start ``jupyter lab`` with isolated Jupyter dirs; stop it however the block ends."""
    settings = tmp / "lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    config = tmp / "config"
    config.mkdir()
    (config / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {
        "jpserver_extensions": {"jupyter_copilot": True, "jupyter_server_fileid": True}}}))
    extensions = tmp / "labextensions"
    extensions.mkdir()
    (extensions / "jupyter-copilot").symlink_to(LABEXTENSION, target_is_directory=True)
    server = Server(free_port(), secrets.token_hex(24), tmp / "server.log")
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config), "JUPYTER_DATA_DIR": str(tmp / "data"),
           "JUPYTER_RUNTIME_DIR": str(tmp / "runtime"), "IPYTHONDIR": str(tmp / "ipython"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--allow-root",
               "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={server.port}",
               "--ServerApp.port_retries=0", f"--IdentityProvider.token={server.token}",
               f"--ServerApp.root_dir={root}", f"--BaseFileIdManager.db_path={tmp}/fileid.db",
               "--LabApp.news_url=None", "--LabApp.expose_app_in_browser=True",
               "--LabApp.check_for_updates_class="
               "jupyterlab.handlers.announcements.NeverCheckForUpdate",
               f"--LabApp.user_settings_dir={tmp}/lab-settings",
               f"--LabApp.workspaces_dir={tmp}/workspaces",
               f"--LabApp.extra_labextensions_path={extensions}"]
    with open(server.log, "wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    try:
        wait_until_up(server, process)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def wait_until_up(server: Server, process: subprocess.Popen[bytes]) -> None:
    """Wait for ``GET /api/status``, then check that the copilot extension answers."""
    deadline = time.monotonic() + 90
    while True:
        if process.poll() is not None:
            raise BenchError(f"jupyter lab exited:\n{server.log.read_text()[-3000:]}")
        try:
            if Client(server).get("/api/status")[0] == 200:
                break
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise BenchError(f"jupyter lab did not answer:\n{server.log.read_text()[-3000:]}")
        time.sleep(0.2)
    status, body = Client(server).get("/copilot/api/status")
    if status != 200 or not body.get("enabled"):
        raise BenchError(f"copilot/api/status answered {status}: {body}")


class Client:
    """One keep-alive HTTP connection to the server, token in the Authorization header."""

    def __init__(self, server: Server) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        self.headers = {"Authorization": f"token {server.token}",
                        "Content-Type": "application/json"}

    def get(self, path: str) -> tuple[int, Any]:
        """GET a JSON resource."""
        self.conn.request("GET", path, headers=self.headers)
        response = self.conn.getresponse()
        return response.status, json.loads(response.read() or b"null")

    def context(self, page_id: str) -> tuple[float, int, bytes]:
        """One get-context call: (milliseconds, status, body)."""
        body = json.dumps({"data": {}, "pageId": page_id})
        started = time.perf_counter()
        self.conn.request("POST", GET_CONTEXT, body=body, headers=self.headers)
        response = self.conn.getresponse()
        raw = response.read()
        return (time.perf_counter() - started) * 1000.0, response.status, raw


def selected_source(status: int, raw: bytes) -> str:
    """The selected cell's source in a get-context answer; fail loudly if it has none."""
    entries = json.loads(raw).get("result", {}).get("customContext", []) if status == 200 else []
    cells = [e for e in entries if e.get("name") == "notebook_selected_cell"]
    if not cells or "source" not in cells[0].get("value", {}):
        raise BenchError(f"get-context answered {status} without a selected cell source: "
                         f"{raw[:500]!r}")
    return str(cells[0]["value"]["source"])


def wait_for(check: Any, what: str, timeout: float = 60.0) -> Any:
    """Call ``check`` until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise BenchError(f"timed out waiting for {what}")
        time.sleep(0.1)
    return value


def prepare(page: Any, client: Client, *, open_: list[str], close: list[str], active: str,
            cell: int, expected: str, tabs: int) -> None:
    """Open/close notebooks, activate ``active``, click one cell, wait for server and kernels."""
    page.evaluate(OPEN_JS, open_)
    page.evaluate(CLOSE_JS, close)
    widget = page.evaluate("p => [...window.jupyterapp.shell.widgets('main')]"
                           ".find(w => w.context && w.context.path === p).id", active)
    page.evaluate("id => window.jupyterapp.shell.activateById(id)", widget)
    cells = page.locator(f"[id='{widget}'] .jp-Cell")
    cells.nth(cell).locator(".jp-InputArea-editor").click(timeout=120_000)
    if page.evaluate(TABS_JS) != tabs:
        raise BenchError(f"expected {tabs} tabs, found {page.evaluate(TABS_JS)}")
    page_id = page.get_attribute("#jupyter-copilot-panel", "data-page-id")
    wait_for(lambda: selected_source(*client.context(page_id)[1:]) == expected,
             f"{active} cell {cell} in get-context", 30)
    wait_for(lambda: all(k["execution_state"] == "idle" for k in client.get("/api/kernels")[1]),
             "idle kernels", 120)


def measure(client: Client, page_id: str, calls: int, expected: str) -> list[float]:
    """Warm up, then time ``calls`` sequential get-context calls, checking every answer."""
    latencies = []
    for i in range(WARMUP + calls):
        ms, status, raw = client.context(page_id)
        if selected_source(status, raw) != expected:
            raise BenchError(f"get-context served the wrong cell: {raw[:500]!r}")
        if i >= WARMUP:
            latencies.append(ms)
    return latencies


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(math.ceil(p / 100 * len(ordered)) - 1, 0)]


def burst_keys(events: int) -> list[str]:
    """Key presses: blocks of 4 cell moves in command mode and 4 cursor moves in an editor."""
    keys, pos, step = [], SMALL_CELL, 1
    for _ in range(events // 8):
        keys.append("Escape")
        for _ in range(4):
            step = -step if not 0 <= pos + step <= 9 else step
            pos += step
            keys.append("ArrowDown" if step > 0 else "ArrowUp")
        keys += ["Enter", "ArrowLeft", "ArrowRight", "Home", "End"]
    return keys


def state_burst(page: Any, traffic: Traffic, events: int, sources: list[str]) -> dict[str, Any]:
    """Send ``events`` selection/cursor key presses; count the state messages they caused."""
    page.wait_for_timeout(500)
    before, counters = len(traffic.of_type("state")), page.evaluate(COUNTERS_JS)
    keys = burst_keys(events)
    started = time.perf_counter()
    for key in keys:
        page.keyboard.press(key)
    elapsed = time.perf_counter() - started
    page.wait_for_timeout(1000)
    after = page.evaluate(COUNTERS_JS)
    if page.evaluate("() => window.jupyterapp.shell.currentWidget.content.model.sharedModel"
                     ".cells.map(c => c.getSource())") != sources:
        raise BenchError("the key burst changed the notebook's cells")
    return {"moves": events // 8 * 8, "presses": len(keys), "seconds": elapsed, "after": after,
            "sent": len(traffic.of_type("state")) - before,
            "delta": {k: after[k] - counters[k] for k in after}}


def startup_js_gz(page: Any) -> list[tuple[str, int, int]]:
    """(file, bytes, gzip bytes) of each extension file the page loaded so far."""
    files = []
    for url in sorted(set(page.evaluate(RESOURCES_JS))):
        path = urlparse(url).path
        if EXTENSION_URL in path:
            data = (LABEXTENSION / path.split(EXTENSION_URL, 1)[1]).read_bytes()
            files.append((path.rsplit("/", 1)[1], len(data), len(gzip.compress(data, 9))))
    return files


@contextmanager
def lab_page(server: Server, traffic: Traffic) -> Iterator[Any]:
    """Headless Chromium on JupyterLab, recording bridge traffic from the first frame."""
    from playwright.sync_api import sync_playwright

    def on_websocket(ws: Any) -> None:
        if "copilot/api/bridge" in ws.url:
            traffic.opened += 1
            ws.on("close", lambda _: setattr(traffic, "closed", traffic.closed + 1))
            ws.on("framesent", lambda p: isinstance(p, str) and traffic.sent.append(json.loads(p)))

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
            page.on("websocket", on_websocket)
            page.goto(f"http://127.0.0.1:{server.port}/lab?token={server.token}")
            page.wait_for_selector("#jupyter-copilot-panel[data-page-id]", state="attached",
                                   timeout=90_000)
            page.evaluate("async () => { await window.jupyterapp.restored; }")
            page.wait_for_timeout(1000)
            yield page
        finally:
            browser.close()


def verdict(ok: bool) -> str:
    """A mark beside a figure."""
    return "ok" if ok else "MISSED"


def run(calls: int, events: int) -> None:
    """Run every scenario and print the report."""
    traffic, results = Traffic(), {}
    with tempfile.TemporaryDirectory(prefix="copilot-bench-") as name:
        tmp = Path(name)
        (tmp / "nb").mkdir()
        sources = make_notebooks(tmp / "nb")
        small, large = sources[SMALL][SMALL_CELL], sources[LARGE][LARGE_CELL]
        with lab_server(tmp, tmp / "nb") as server, lab_page(server, traffic) as page:
            js = startup_js_gz(page)
            client = Client(server)
            page_id = page.get_attribute("#jupyter-copilot-panel", "data-page-id")
            steps = [("10 cells, 1 tab", [SMALL], [], SMALL, SMALL_CELL, small, 1),
                     ("2,000 cells, 1 tab", [LARGE], [SMALL], LARGE, LARGE_CELL, large, 1),
                     ("10 cells, 10 tabs", [*EXTRAS, SMALL], [LARGE], SMALL, SMALL_CELL, small,
                      10),
                     ("2,000 cells, 10 tabs", [LARGE], [SMALL], LARGE, LARGE_CELL, large, 10)]
            for label, open_, close, active, cell, expected, tabs in steps:
                prepare(page, client, open_=open_, close=close, active=active, cell=cell,
                        expected=expected, tabs=tabs)
                results[label] = measure(client, page_id, calls, expected)
                print(f"  measured {label}", file=sys.stderr)
            prepare(page, client, open_=[SMALL], close=[LARGE], active=SMALL, cell=SMALL_CELL,
                    expected=small, tabs=10)
            burst = state_burst(page, traffic, events, sources[SMALL])
            pages = client.get("/copilot/api/status")[1]["pages"]
    report(calls, results, burst, js, traffic, pages)


def report(calls: int, results: dict[str, list[float]], burst: dict[str, Any],
           js: list[tuple[str, int, int]], traffic: Traffic, pages: int) -> None:
    """Print the figures beside their targets."""
    print(f"\nget-context latency: {calls} sequential calls per scenario after {WARMUP} warm-up, "
          "one keep-alive connection")
    print(f"{'scenario':<22}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}   target p95 < "
          f"{P95_TARGET_MS:g} ms")
    p95 = {}
    for label, values in results.items():
        p95[label] = percentile(values, 95)
        print(f"{label:<22}{percentile(values, 50):>9.2f}{p95[label]:>9.2f}{max(values):>9.2f}"
              f"   {verdict(p95[label] < P95_TARGET_MS)}")
    for tabs in ("1 tab", "10 tabs"):
        ratio = p95[f"2,000 cells, {tabs}"] / p95[f"10 cells, {tabs}"]
        print(f"p95(2,000 cells) / p95(10 cells), {tabs:<8}{ratio:>6.2f}x   target <= "
              f"{RATIO_TARGET:g}x  {verdict(ratio <= RATIO_TARGET)}")
    bound = burst["seconds"] / 0.1 + 2
    print(f"\nstate messages: {burst['moves']} cell/cursor moves ({burst['presses']} key presses "
          f"with Enter/Escape) in {burst['seconds']:.2f} s -> {burst['sent']} state messages sent "
          f"(at most one per 100 ms window: <= {bound:.0f})  {verdict(burst['sent'] <= bound)}")
    print(f"panel counters during the burst: {burst['delta']}; totals: {burst['after']}")
    print(f"bridge WebSockets: opened {traffic.opened}, closed {traffic.closed}, hello "
          f"{len(traffic.of_type('hello'))}, pages on the server {pages}  "
          f"{verdict(traffic.opened == 1 and traffic.closed == 0 and pages == 1)}")
    total_gz = sum(gz for _, _, gz in js) / 1024
    print(f"\nJS loaded at JupyterLab start from {EXTENSION_URL}:")
    for name, size, gz in js:
        print(f"  {name:<36}{size / 1024:>8.1f} KB{gz / 1024:>8.1f} KB gz")
    print(f"  total{total_gz:>53.1f} KB gz   target <= {GZ_TARGET_KB:g} KB  "
          f"{verdict(total_gz <= GZ_TARGET_KB)}")


def main() -> int:
    """Parse arguments and run; exit 1 on a functional failure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=None, help="calls per scenario (200)")
    parser.add_argument("--quick", action="store_true", help="small smoke run for CI")
    args = parser.parse_args()
    calls = args.calls or (30 if args.quick else 200)
    try:
        run(calls, 200 if args.quick else 1000)
    except BenchError as error:
        print(f"FAILED: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
