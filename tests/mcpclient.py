"""The real MCP client SDK, connected over HTTP to the test server's ``copilot/mcp``."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def mcp_url(port: int, base_url: str) -> str:
    """The endpoint URL of the server under test."""
    return f"http://localhost:{port}{base_url}copilot/mcp"


@contextlib.asynccontextmanager
async def mcp_client(
    url: str, headers: dict[str, str] | None, mode: str = "auto", timeout: float = 30.0
) -> AsyncIterator[Client]:
    """An entered MCP ``Client`` that sends ``headers`` (the Jupyter token) on every request."""
    http = httpx2.AsyncClient(headers=headers or {}, timeout=httpx2.Timeout(timeout, read=timeout))
    async with (
        http,
        Client(
            streamable_http_client(url, http_client=http), mode=mode, read_timeout_seconds=timeout
        ) as client,
    ):
        yield client


def structured(result: Any) -> dict[str, Any]:
    """A tool result's structured content, checked against its JSON text content."""
    assert result.structured_content is not None
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content  # type: ignore[no-any-return]


def refusal_code(result: Any) -> str:
    """The contract code of a refused tool call (``isError`` with the error object)."""
    assert result.is_error, result
    return structured(result)["error"]["code"]  # type: ignore[no-any-return]


def read_cells_answer(
    cells: list[dict[str, Any]], request: dict[str, Any], path: str = "a.ipynb"
) -> dict[str, Any]:
    """What a JupyterLab page answers to read-cells, for the scripted page.

    ``cells`` are ``{"cellId", "cellType", "source", "outputs"?}``; the rules are those of
    ``labextension/src/readcells.ts`` (proven against the real page in the browser tests).
    """
    data = request["data"]
    if data["path"] != path:
        return {"ok": False, "error": {"code": "artifact-mismatch", "message": "Other notebook."}}
    start = 0
    if data["startCellId"] is not None:
        ids = [c["cellId"] for c in cells]
        if data["startCellId"] not in ids:
            return {"ok": False, "error": {"code": "cell-not-found", "message": "Gone."}}
        start = ids.index(data["startCellId"])
    taken: list[dict[str, Any]] = []
    total = 0
    for cell in cells[start:]:
        if len(taken) >= data["maxCells"] or (taken and total > data["maxBytes"]):
            break
        item = {k: cell[k] for k in ("cellId", "cellType", "source")}
        if data["includeOutputs"] and cell["cellType"] == "code":
            item["outputs"] = cell.get("outputs", [])
            total += len(json.dumps(item["outputs"]).encode())
        total += len(cell["source"].encode("utf-8", "surrogatepass"))
        taken.append(item)
    after = start + len(taken)
    return {
        "path": path,
        "cellCount": len(cells),
        "startIndex": start,
        "cells": taken,
        "nextCellId": cells[after]["cellId"] if after < len(cells) else None,
    }
