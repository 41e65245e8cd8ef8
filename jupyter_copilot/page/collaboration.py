"""Reading a cell from the live shared document of real-time collaboration.

Only used when jupyter-collaboration (``jupyter_server_ydoc``) is running; nothing here
imports it, so the package works the same without it installed.
"""

from __future__ import annotations

from typing import Any


def live_cell_data(document: Any, cell_id: str) -> dict[str, Any] | None:
    """The cell with ``cell_id`` in a live YNotebook as plain data, or None.

    Only the one cell is converted: its type, complete source and metadata.
    """
    for ycell in document.ycells:
        if ycell.get("id") != cell_id:
            continue
        metadata = ycell.get("metadata")
        return {
            "cell_type": ycell.get("cell_type"),
            "source": str(ycell.get("source") or ""),
            "metadata": metadata.to_py() if hasattr(metadata, "to_py") else (metadata or {}),
        }
    return None
