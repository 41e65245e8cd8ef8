"""Tool registrations: each notebook tool once per active kernel session on a notebook.

The session manager is the authority (docs/protocol.md section 2). :class:`Registrations` keeps
the table; the server's adapters (``server/adapters.py``) keep it current from the server's
own calls (session created, updated, deleted; kernel removed, which covers shutdown, culling
and death) and from the contents service's rename events (:meth:`Registrations.renamed`).
Nothing polls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any


@dataclass(frozen=True)
class Registration:
    """One kernel session that holds the notebook tools (``toolspecs.NOTEBOOK_TOOLS``)."""

    session_id: str
    kernel_id: str
    artifact_id: str | None
    path: str

    def to_json(self, tool: str) -> dict[str, Any]:
        """The contract's shape, for one of the notebook tools."""
        return {
            "tool": tool,
            "sessionId": self.session_id,
            "kernelId": self.kernel_id,
            "artifactId": self.artifact_id,
            "path": self.path,
        }


def is_notebook_session(model: dict[str, Any]) -> bool:
    """Whether a session model is a kernel session on a notebook document."""
    path = model.get("path")
    kernel = model.get("kernel") or {}
    return (
        isinstance(path, str)
        and path.endswith(".ipynb")
        and model.get("type") in (None, "notebook")
        and isinstance(kernel.get("id"), str)
    )


class Registrations:
    """The live table of registrations, keyed by session id.

    ``artifact_id`` maps a path to its file ID (None when the file-ID service is missing).
    """

    def __init__(self, artifact_id: Callable[[str], str | None]) -> None:
        self._artifact_id = artifact_id
        self._by_session: dict[str, Registration] = {}

    def all(self) -> list[Registration]:
        """Every registration, oldest first."""
        return list(self._by_session.values())

    def for_artifact(self, artifact_id: str) -> list[Registration]:
        """The registrations of one notebook."""
        return [r for r in self._by_session.values() if r.artifact_id == artifact_id]

    def session_saved(self, model: dict[str, Any]) -> None:
        """A session was created or changed: register it, or drop it if no longer eligible."""
        session_id = model.get("id")
        if not isinstance(session_id, str):
            return
        if not is_notebook_session(model):
            self._by_session.pop(session_id, None)
            return
        path = model["path"]
        self._by_session[session_id] = Registration(
            session_id=session_id,
            kernel_id=model["kernel"]["id"],
            artifact_id=self._artifact_id(path),
            path=path,
        )

    def session_deleted(self, session_id: str) -> None:
        """A session ended."""
        self._by_session.pop(session_id, None)

    def kernel_removed(self, kernel_id: str) -> None:
        """A kernel shut down, was culled or died: its sessions no longer hold the tool."""
        for session_id, registration in list(self._by_session.items()):
            if registration.kernel_id == kernel_id:
                del self._by_session[session_id]

    def renamed(self, old_path: str, new_path: str) -> None:
        """A file or directory was renamed: follow it; the artifactId stays the same."""
        prefix = old_path.rstrip("/") + "/"
        for session_id, registration in list(self._by_session.items()):
            path = registration.path
            if path == old_path:
                moved = new_path
            elif path.startswith(prefix):
                moved = new_path.rstrip("/") + "/" + path[len(prefix) :]
            else:
                continue
            # The artifactId survives renames; asking the file-ID service about the new path
            # here could race its own handling of the same event and mint a second id.
            self._by_session[session_id] = replace(registration, path=moved)
