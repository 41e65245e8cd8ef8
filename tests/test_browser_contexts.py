"""Browser pages share one Chromium per test process, its caches and Playwright's driver,
nothing else: what a ``lab_page`` leaves in cookies, storage and permissions is forgotten
when it closes, and a second page open at the same time is a browser context of its own
(tests/lab.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tests import lab
from tests.kernels import ATTACHED_KERNEL_MANAGER
from tests.lab import lab_page

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]


async def test_pages_share_one_chromium_and_its_caches_and_no_storage_cookies_or_permissions(
    lab_server: Any,
) -> None:
    async with lab_page(lab_server) as first:
        server = await lab.chromium()
        starts, drivers = lab.chromium_starts, lab.driver_starts
        await first.page.evaluate("() => localStorage.setItem('copilot-test', 'first')")
        await first.page.evaluate("() => { document.cookie = 'copilot-test=first; path=/'; }")
        await first.page.context.grant_permissions(["clipboard-read"])
        assert await first.page.evaluate("() => localStorage.getItem('copilot-test')") == "first"
        assert "copilot-test=first" in await first.page.evaluate("() => document.cookie")
    async with lab_page(lab_server) as second:
        # The same Chromium, not a new launch, and the same Playwright driver...
        assert await lab.chromium() is server
        assert (lab.chromium_starts, lab.driver_starts) == (starts, drivers)
        assert server.alive()
        # ...and none of the first page's storage, cookies or permissions.
        assert await second.page.evaluate("() => localStorage.getItem('copilot-test')") is None
        assert "copilot-test" not in await second.page.evaluate("() => document.cookie")
        permission = await second.page.evaluate(
            "async () => (await navigator.permissions.query({name: 'clipboard-read'})).state"
        )
        assert permission != "granted"
        # JupyterLab's scripts came from Chromium's cache this time (a transfer of 0 bytes).
        scripts = await second.page.evaluate(
            """() => performance.getEntriesByType('resource')
                .filter(e => e.initiatorType === 'script')
                .map(e => e.transferSize)"""
        )
        assert len(scripts) > 5 and scripts.count(0) > len(scripts) / 2, scripts
        # No build check (tests/lab.py): JupyterLab's server answers one by starting Node.js.
        checks = await second.page.evaluate(
            """() => performance.getEntriesByType('resource')
                .filter(e => e.name.includes('/lab/api/build')).length"""
        )
        assert checks == 0
        # A page open at the same time is a browser context of its own.
        await second.page.evaluate("() => localStorage.setItem('copilot-test', 'second')")
        async with lab_page(lab_server) as third:
            assert third.page.context is not second.page.context
            assert await third.page.evaluate("() => localStorage.getItem('copilot-test')") is None


def test_the_browser_tests_of_a_process_listen_on_one_port() -> None:
    """Each browser test's server takes the port the last one closed, so that the addresses
    of JupyterLab's scripts, and Chromium's caches of them, stay the same."""
    first, port = lab.lab_port()
    first.close()
    second, again = lab.lab_port()
    try:
        assert again == port
        # Taken meanwhile: another port, and that one from then on.
        third, other = lab.lab_port()
        third.close()
        assert other != port
        fourth, last = lab.lab_port()
        fourth.close()
        assert last == other
    finally:
        second.close()


def test_a_browser_module_marked_shared_kernel_attaches_to_the_shared_kernel(
    lab_server: Any,
) -> None:
    """The mark holds for JupyterLab's server config too (tests/fixtures/server.py)."""
    assert lab_server.kernel_manager.kernel_manager_class == ATTACHED_KERNEL_MANAGER
