"""Browser pages share one Chromium per test process and nothing else: each ``lab_page`` is a
browser context of its own (tests/lab.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests import lab
from tests.lab import lab_page

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out.
pytestmark = pytest.mark.browser


async def test_pages_share_one_chromium_and_no_storage_cookies_or_permissions(
    lab_server: Any,
) -> None:
    async with lab_page(lab_server) as first:
        server = await lab.browser_server()
        starts = lab.browser_server_starts
        await first.page.evaluate("() => localStorage.setItem('copilot-test', 'first')")
        await first.page.evaluate("() => { document.cookie = 'copilot-test=first; path=/'; }")
        await first.page.context.grant_permissions(["clipboard-read"])
        assert await first.page.evaluate("() => localStorage.getItem('copilot-test')") == "first"
        assert "copilot-test=first" in await first.page.evaluate("() => document.cookie")
    async with lab_page(lab_server) as second:
        # The same Chromium, not a new launch...
        assert await lab.browser_server() is server
        assert lab.browser_server_starts == starts
        assert server.alive()
        # ...and a fresh context: none of the first page's storage, cookies or permissions.
        assert await second.page.evaluate("() => localStorage.getItem('copilot-test')") is None
        assert "copilot-test" not in await second.page.evaluate("() => document.cookie")
        permission = await second.page.evaluate(
            "async () => (await navigator.permissions.query({name: 'clipboard-read'})).state"
        )
        assert permission != "granted"
