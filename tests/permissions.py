"""Server collaborators that take write permission away, for read-only tests.

CI runs as root, where file modes never stop a write: permission is taken away where the
server decides it, in the authorizer and in the contents service.
"""

from __future__ import annotations

from typing import Any

from jupyter_server.auth.authorizer import Authorizer
from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager


class NoContentsWriteAuthorizer(Authorizer):
    """Allows everything except ``write`` on ``contents``."""

    def is_authorized(self, handler: Any, user: Any, action: str, resource: str) -> bool:
        """Deny writing files; allow the rest."""
        return not (action == "write" and resource == "contents")


class ReadOnlyNotebooksManager(AsyncLargeFileManager):
    """Reports notebooks whose name starts with ``readonly-`` as not writable.

    JupyterLab then opens them read-only, as it does for a file the user may not write.
    """

    async def get(self, path: str, content: bool = True, **kwargs: Any) -> Any:
        """The model, with ``writable`` false for the read-only notebooks."""
        model = await super().get(path, content=content, **kwargs)
        if path.rsplit("/", 1)[-1].startswith("readonly-"):
            model["writable"] = False
        return model
