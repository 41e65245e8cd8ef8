"""Another JupyterLab extension builds on ours through its tokens (docs/extending.md): a second
plugin, registered in the real page, requires ICopilotBridge and ICopilotReviews and reads
them."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import make_notebook
from tests.eventually import eventually
from tests.lab import Lab, lab_page
from tests.test_browser_review import CELLS, open_notebook, proposal, propose, selected_cell

# Real JupyterLab in Chromium: `pytest -m "not browser"` leaves these out. No test here runs
# code, so the kernel sessions attach to one real kernel per test process (tests/kernels.py).
pytestmark = [pytest.mark.browser, pytest.mark.shared_kernel]

#: A second extension's plugin, as its author writes it, given our plugins' tokens (an
#: extension imports them from the package; the page's plugin registry holds the same ones).
CONSUMER_JS = """async () => {
    const app = window.jupyterapp;
    const ours = id => app.pluginRegistry._plugins.get('jupyterlab-agent-review:' + id);
    const bridgeToken = ours('plugin').provides;
    const reviewsToken = ours('reviews').provides;
    window.consumer = { changes: 0 };
    app.registerPlugin({
        id: 'another-extension:plugin',
        requires: [bridgeToken, reviewsToken],
        activate: (app, bridge, reviews) => {
            reviews.changed.connect(() => { window.consumer.changes += 1; });
            Object.assign(window.consumer, { bridge, reviews });
        }
    });
    await app.activatePlugin('another-extension:plugin');
    const { bridge, reviews } = window.consumer;
    return {
        tokens: [bridgeToken.name, reviewsToken.name],
        ready: await bridge.ready,
        pageId: bridge.pageId,
        isOpen: bridge.isOpen,
        toolsEnabled: bridge.toolsEnabled,
        entries: reviews.entries(),
        members: ['keep', 'undo', 'send', 'registerAction', 'requestKeep'].filter(
            name => name in bridge || name in reviews)
    };
}"""

REVIEWS_JS = """() => ({
    entries: window.consumer.reviews.entries(),
    changes: window.consumer.changes
})"""


async def consumer_reviews(lab: Lab) -> dict[str, Any]:
    return await lab.page.evaluate(REVIEWS_JS)  # type: ignore[no-any-return]


async def test_a_second_plugin_requires_the_tokens_and_reads_bridge_and_reviews(
    lab_server, jp_fetch, jp_root_dir
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", CELLS)
    async with lab_page(lab_server) as lab:
        await open_notebook(lab, jp_fetch, "a.ipynb")
        seen = await lab.page.evaluate(CONSUMER_JS)
        assert seen["tokens"] == [
            "jupyterlab-agent-review:ICopilotBridge",
            "jupyterlab-agent-review:ICopilotReviews",
        ]
        assert seen["ready"] is True
        assert seen["pageId"] == await lab.page_id()
        assert seen["isOpen"] is True and seen["toolsEnabled"] is True
        assert seen["entries"] == []
        # Observing only: nothing to keep, undo or send with.
        assert seen["members"] == []

        cell = await selected_cell(lab, jp_fetch, "a.ipynb", 1)
        status, body = await propose(jp_fetch, proposal(cell), "via-token")
        assert status == 200, body

        async def listed() -> dict[str, Any] | None:
            now = await consumer_reviews(lab)
            return now if now["entries"] else None

        now = await eventually(listed, "the review in the token's entries")
        (entry,) = now["entries"]
        assert entry["callId"] == "via-token" and entry["kind"] == "edit"
        assert entry["path"] == "a.ipynb" and entry["cellId"] == cell["cellId"]
        assert entry["state"] == "open" and now["changes"] >= 1
        assert await lab.page.evaluate("() => window.consumer.reviews.reveal('via-token')")
        assert not await lab.page.evaluate("() => window.consumer.reviews.reveal('no-such-call')")

        await lab.page.locator(
            ".jp-Copilot-Review[data-call-id='via-token'] .jp-Copilot-ReviewUndo"
        ).click()

        async def decided() -> str | None:
            (entry,) = (await consumer_reviews(lab))["entries"]
            return entry["state"] if entry["state"] != "open" else None

        assert await eventually(decided, "the review's decision in the token") == "undo"
