"""Binder's first screen in headless Chromium, against a server started by a CI script.

Usage: python .ci/binder_smoke.py BASE_URL TOKEN OPEN_URL

Opens OPEN_URL (README's Binder start URL, or the URL `jupyter lab` asked a browser to
open) and checks what a visitor sees first: the notebook the URL names, with its kernel,
the Copilot panel's icon, which opens the panel (it loads on first use), a pill for a
selected cell, a reply from the demo agent with that cell attached, and every cell of the
notebook running (the slider included). Exits non-zero with the reason on the first failure.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import urllib.request
from pathlib import Path
from urllib.parse import unquote, urlsplit

# The browser tests' Chromium and its flags (tests/lab.py), from this checkout.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.lab import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

SHOT = "/tmp/binder-smoke.png"


def sessions(base: str, token: str) -> list[dict]:
    """The server's kernel sessions."""
    request = urllib.request.Request(
        f"{base}api/sessions", headers={"Authorization": f"token {token}"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


async def smoke(base: str, token: str, open_url: str) -> None:
    """Fail with AssertionError or a playwright timeout on the first thing a visitor misses."""
    from playwright.async_api import async_playwright

    errors: list[str] = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = await browser.new_page(viewport={"width": 1400, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            await page.goto(open_url)
            panel = page.locator("#jupyter-copilot-panel")
            await panel.wait_for(state="attached", timeout=90_000)
            # The visitor opens the panel from its icon in the right sidebar, unless the saved
            # layout (a workspace left with the panel open) already shows it.
            await page.wait_for_function(
                "() => !document.querySelector('.jp-mod-restoring')", timeout=60_000
            )
            await page.wait_for_timeout(1000)  # the restored layout shows its panels
            if not await panel.is_visible():
                icon = page.locator(".jp-SideBar .lm-TabBar-tab[data-id='jupyter-copilot-panel']")
                await icon.click(timeout=30_000)
            await panel.locator(".jp-Copilot-Composer textarea").wait_for(timeout=30_000)
            print("the Copilot panel is visible")
            if "/lab/tree/" not in page.url:
                raise AssertionError(f"JupyterLab opened {page.url}, not a notebook")
            notebook = unquote(urlsplit(page.url).path.split("/lab/tree/", 1)[1])
            name = notebook.rsplit("/", 1)[-1]
            tab = page.locator("#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current")
            await tab.filter(has_text=name).wait_for(timeout=30_000)
            print(f"{name} is the open tab")
            for _ in range(120):
                if any(s.get("path") == notebook for s in sessions(base, token)):
                    break
                await page.wait_for_timeout(500)
            else:
                raise AssertionError(f"no kernel session started for {notebook}")
            await page.locator(".jp-Notebook-ExecutionIndicator[data-status=idle]").wait_for(
                state="attached", timeout=60_000
            )
            print("its kernel is idle")

            function = re.compile(r"def \w+\(")
            cell = page.locator(".jp-Notebook .jp-CodeCell").filter(has_text=function).first
            await cell.locator(".jp-InputArea-editor").click()
            pill = page.locator(".jp-Copilot-Pill").filter(has_text="Selected python cell")
            await pill.wait_for(state="visible", timeout=15_000)
            print("pill:", " ".join((await pill.inner_text()).split()))
            await pill.locator("button").click()
            chip = page.locator(".jp-Copilot-ComposerAttachment")
            await chip.filter(has_text="Code cell").wait_for(state="visible")
            print("attached:", " ".join((await chip.inner_text()).split()))
            box = page.locator(".jp-Copilot-Composer textarea")
            await box.fill("Reply with the word ready")
            await box.press("Enter")
            reply = page.locator(".jp-Copilot-Message[data-role=agent]")
            for _ in range(120):
                if await reply.count() and (await reply.last.inner_text()).strip() == "ready":
                    break
                await page.wait_for_timeout(500)
            else:
                raise AssertionError("the demo agent did not reply 'ready'")
            print("the demo agent replied: ready")

            await page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
            await page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
            await page.locator(".widget-slider").first.wait_for(state="visible", timeout=60_000)
            await page.locator(".jp-Notebook-ExecutionIndicator[data-status=idle]").wait_for(
                state="attached", timeout=60_000
            )
            failed = page.locator(
                ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
            )
            assert await failed.count() == 0, "a cell of the demo notebook failed"
            print("every cell ran; the slider is shown")
        finally:
            try:
                await page.screenshot(path=SHOT)
                print("screenshot:", SHOT)
            except Exception as e:  # noqa: BLE001 (the failure above is the one to report)
                print("no screenshot:", e)
            await browser.close()
    copilot = [e for e in errors if "copilot" in e.lower()]
    assert not copilot, f"console errors from jupyter-copilot: {copilot}"


def main() -> int:
    """Run the smoke test; 0 when a visitor's first minute works."""
    base, token, open_url = sys.argv[1:4]
    try:
        asyncio.run(smoke(base, token, open_url))
    except Exception as e:  # noqa: BLE001 (any failure is reported in one line)
        print(f"binder smoke test FAILED: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print("binder smoke test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
