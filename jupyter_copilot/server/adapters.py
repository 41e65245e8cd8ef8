"""Where the extension meets jupyter_server, its contents manager and tornado, in one place.

Everything else reaches the running server through what this module offers, so that a
change in one of those packages is answered here. Public APIs are used wherever they
exist: the file-ID and collaboration extensions through the settings they publish, the
server's event logger, the contents manager's ``get``. Two uses of other packages' private
parts remain, each with its reason in its docstring:

- :func:`follow_sessions` wraps three methods of the session manager and one of the kernel
  manager on the running server's instances;
- :func:`authenticate` sets jupyter_server's ``_jupyter_current_user`` on a handler that a
  conversation token authenticated.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from jupyter_core.utils import ensure_async
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.services.contents.filemanager import (
    AsyncFileContentsManager,
    FileContentsManager,
)

from ..page.collaboration import live_cell_data
from ..page.sessions import Registrations
from ..tools.service import NO_LIVE_DOCUMENT

if TYPE_CHECKING:
    from ..admin.killswitch import Logger

#: ``get`` of the contents managers whose ``writable`` is exactly ``is_writable(path)``.
_STOCK_GETS = (FileContentsManager.get, AsyncFileContentsManager.get)

#: The contents service's events (jupyter_server's event logger), which carry renames.
CONTENTS_EVENTS = "https://events.jupyter.org/jupyter_server/contents_service/v1"


class JupyterServer:
    """What the extension asks of the Jupyter server it runs in.

    Each answer is read when asked: the file-ID and collaboration extensions may load after
    this one, and an administrator may swap the contents manager in the server's config.
    """

    def __init__(self, serverapp: Any, log: Logger) -> None:
        self._serverapp = serverapp
        self._log = log

    def artifact_id(self, path: str) -> str | None:
        """The file ID of ``path`` (jupyter_server_fileid), or None without that extension."""
        manager = self._serverapp.web_app.settings.get("file_id_manager")
        if manager is None:
            self._log.warning(
                "jupyter-copilot needs the jupyter_server_fileid extension to identify "
                "notebooks; no context is served without it."
            )
            return None
        return manager.index(path)

    async def file_writable(self, path: str) -> bool:
        """Whether the contents manager would let the person save ``path``.

        The stock file managers answer ``writable`` with ``is_writable(path)``; asking it
        directly saves a thread hop and the model (about 1 ms a call). Any other manager,
        including a subclass that overrides ``get``, is asked through ``get``.
        """
        manager: Any = self._serverapp.contents_manager
        if type(manager).get in _STOCK_GETS:
            return bool(manager.is_writable(path))
        try:
            model = await ensure_async(manager.get(path, content=False))
        except Exception:
            # Gone or unreadable: not something we may write.
            self._log.debug("jupyter-copilot: cannot stat the notebook", exc_info=True)
            return False
        return bool(model.get("writable"))

    async def live_cell(self, artifact_id: str, cell_id: str) -> Any:
        """The cell in the live shared document, or ``NO_LIVE_DOCUMENT`` when there is none.

        None when the live document has no such cell.
        """
        ydoc = self._ydoc_extension()
        if ydoc is None:
            return NO_LIVE_DOCUMENT
        # The room is named after the file ID, which the caller has already checked: asking
        # by room saves get_document() a second look-up in the file-ID database.
        from jupyter_server_ydoc.utils import encode_file_path, room_id_from_encoded_path

        room_id = room_id_from_encoded_path(encode_file_path("json", "notebook", artifact_id))
        document = await ydoc.get_document(room_id=room_id, copy=False)
        if document is None:
            # Nobody has the room open: the page's model is the live one.
            return NO_LIVE_DOCUMENT
        return live_cell_data(document, cell_id)

    def rtc_enabled(self) -> bool:
        """Whether real-time collaboration (jupyter_server_ydoc) is enabled on this server."""
        manager = getattr(self._serverapp, "extension_manager", None)
        if manager is None:
            return False
        extension = manager.extensions.get("jupyter_server_ydoc")
        return bool(extension is not None and extension.enabled)

    def follow_sessions(self, registrations: Registrations) -> None:
        """Keep ``registrations`` current with the server's sessions, kernels and renames."""
        hook_session_manager(self._serverapp.session_manager, registrations)
        hook_kernel_manager(self._serverapp.kernel_manager, registrations)
        event_logger = getattr(self._serverapp, "event_logger", None)
        if event_logger is not None:

            async def on_contents_event(logger: Any, schema_id: str, data: dict[str, Any]) -> None:
                if data.get("action") == "rename" and isinstance(data.get("source_path"), str):
                    registrations.renamed(data["source_path"], data["path"])

            event_logger.add_listener(schema_id=CONTENTS_EVENTS, listener=on_contents_event)

    def _ydoc_extension(self) -> Any:
        if not self.rtc_enabled():
            return None
        return self._serverapp.web_app.settings.get("jupyter_server_ydoc")


def hook_session_manager(manager: Any, registrations: Registrations) -> None:
    """Wrap the session manager's create, update and delete so the table follows them.

    A private use, kept on purpose: jupyter_server has no public hook or event for a
    session's creation, change or deletion. The server emits a kernel ``start`` event before
    the session row exists, so events alone cannot tell which session a kernel belongs to;
    the manager's own calls can. Configuring a subclass (``ServerApp.session_manager_class``)
    would be public but is the administrator's setting, made before any extension loads, and
    would replace a subclass that JupyterHub or another extension installed. The wrappers call
    through, so a manager that another extension wrapped or subclassed keeps working.
    """
    create = manager.create_session
    update = manager.update_session
    delete = manager.delete_session

    @functools.wraps(create)
    async def create_session(*args: Any, **kwargs: Any) -> Any:
        model = await create(*args, **kwargs)
        registrations.session_saved(model)
        return model

    @functools.wraps(update)
    async def update_session(session_id: str, **kwargs: Any) -> Any:
        result = await update(session_id, **kwargs)
        if kwargs:
            registrations.session_saved(await manager.get_session(session_id=session_id))
        return result

    @functools.wraps(delete)
    async def delete_session(session_id: str) -> Any:
        try:
            return await delete(session_id)
        finally:
            # Whether or not the kernel shut down cleanly, the session is gone for us.
            registrations.session_deleted(session_id)

    manager.create_session = create_session
    manager.update_session = update_session
    manager.delete_session = delete_session


def hook_kernel_manager(manager: Any, registrations: Registrations) -> None:
    """Drop registrations when their kernel leaves the kernel manager's map.

    ``remove_kernel`` is where shutdown, culling and a kernel's death all end. jupyter_server's
    kernel action events leave out a kernel that died (the manager removes it without one),
    so the method is wrapped, a private use for the reasons :func:`hook_session_manager` gives.
    """
    remove = manager.remove_kernel

    @functools.wraps(remove)
    def remove_kernel(kernel_id: str) -> Any:
        try:
            return remove(kernel_id)
        finally:
            registrations.kernel_removed(kernel_id)

    manager.remove_kernel = remove_kernel


def authenticate(handler: JupyterHandler, user: Any) -> None:
    """Make ``user`` the user of a request authenticated by other means than Jupyter's.

    A conversation token is this extension's own credential, so the server's identity
    provider cannot check it. tornado's ``current_user`` is public; jupyter_server also reads
    ``_jupyter_current_user``, a private attribute with no public setter: its identity
    provider returns it as the request's user and its XSRF and activity checks take the
    request for authenticated by it. Setting both is what ``JupyterHandler.prepare`` does.
    """
    handler.current_user = handler._jupyter_current_user = user  # type: ignore[attr-defined]
