"""Defence in depth: agent processes see the server's folder read-only.

Where bubblewrap (``bwrap``) works, an agent runs in a mount namespace in which the server's
root directory is bound read-only; the rest of the machine is as it was, and the folders
the agent keeps its own state in stay writable. Even a tool of the agent's that does not go
through us then cannot change the person's files: writes reach them only through a file
review that the person keeps (docs/security.md, "The sandbox").

Some agents read files with their own tools, never asking. When a conversation has not
granted ``files``, the root is replaced by an empty read-only folder, so such a read finds
nothing; when it has, every notebook in it is replaced by an empty file, since notebooks
are read through the notebook tools only (a notebook created after the agent started is
not hidden). Folders of agent settings inside the root (a notebook folder's ``.gemini`` or
``.claude``, which can name commands to run) are hidden the same way.

``CopilotApp.agent_sandbox``: ``auto`` uses it when it works here, ``required`` starts no
agent without it, ``off`` never uses it. Whether it works is found out once, by trying it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterable
from dataclasses import dataclass

AUTO = "auto"
REQUIRED = "required"
OFF = "off"
SANDBOX_MODES = (AUTO, REQUIRED, OFF)

#: Notebooks hidden one by one when the root is shown; with more, the root is hidden whole.
MAX_HIDDEN_NOTEBOOKS = 2000
#: Folder entries looked at to find them; a larger tree hides the root whole.
MAX_SCANNED_ENTRIES = 50_000

#: Folders of agent settings that a notebook folder may hold and that can name commands to
#: run (hooks, MCP servers, tool discovery): hidden from agents under the sandbox.
SETTINGS_FOLDERS = (".gemini", ".claude", ".codex", ".goose")


def inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it (both already absolute and resolved)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def runtime_folders(command: list[str]) -> list[str]:
    """Folders the agent's program itself runs from: the command's package, this Python.

    A virtualenv, an editable install or a ``node_modules`` folder may lie inside the
    server's root; when the root is hidden these are shown again, read-only, so that the
    agent can still start.
    """
    folders = [sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(__file__))]
    found = shutil.which(command[0]) if command else None
    if found is not None:
        real = os.path.realpath(found)
        marker = f"{os.sep}node_modules{os.sep}"
        if marker in real:
            folders.append(real.split(marker, 1)[0] + marker.rstrip(os.sep))
        else:
            folders.append(os.path.dirname(os.path.dirname(real)))
    return [os.path.realpath(f) for f in folders]


def notebooks_in(root: str) -> list[str] | None:
    """Every notebook under ``root`` (symlinks not followed), or ``None`` when there are too
    many, or too large a tree to look through."""
    found: list[str] = []
    scanned = 0
    for folder, folders, files in os.walk(root):
        scanned += len(folders) + len(files)
        if scanned > MAX_SCANNED_ENTRIES:
            return None
        found.extend(os.path.join(folder, f) for f in files if f.lower().endswith(".ipynb"))
        if len(found) > MAX_HIDDEN_NOTEBOOKS:
            return None
    return found


def wrap(
    bwrap: str,
    command: Iterable[str],
    root: str,
    writable: Iterable[str],
    hide_root: bool = False,
    hidden: Iterable[str] = (),
    shown: Iterable[str] = (),
    notebooks: Iterable[str] = (),
) -> list[str]:
    """``command`` run by bubblewrap with ``root`` read-only (or empty) and ``writable`` back.

    ``hidden`` folders inside the root are replaced by empty read-only ones, and every one
    of ``notebooks`` by an empty file; with ``hide_root``, the ``shown`` folders inside it
    are bound back read-only.
    """
    argv = [bwrap, "--bind", "/", "/"]
    if hide_root:
        argv += ["--tmpfs", root]
        for folder in shown:
            argv += ["--ro-bind", folder, folder]
    else:
        argv += ["--ro-bind", root, root]
        for folder in hidden:
            argv += ["--tmpfs", folder, "--remount-ro", folder]
        # Notebooks are read through the notebook tools only, never from disk.
        for notebook in notebooks:
            argv += ["--ro-bind", "/dev/null", notebook]
    for folder in writable:
        argv += ["--bind", folder, folder]
    if hide_root:
        argv += ["--remount-ro", root]
    # A PID namespace of its own: when bubblewrap ends, the kernel ends every process the
    # agent started, even one that left its process group or ignores SIGTERM.
    argv += ["--unshare-pid", "--dev", "/dev", "--proc", "/proc", "--die-with-parent"]
    return [*argv, "--", *command]


def _works(bwrap: str, root: str) -> bool:
    """Try it: a process inside may run but may not create a file in ``root``."""
    probe = os.path.join(root, f".jupyter-copilot-sandbox-{uuid.uuid4().hex}")
    script = f'touch "{probe}" 2>/dev/null && exit 3; exit 0'
    try:
        done = subprocess.run(
            wrap(bwrap, ["/bin/sh", "-c", script], root, []),
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        if os.path.lexists(probe):
            os.unlink(probe)
    return done.returncode == 0


@dataclass(frozen=True)
class Sandbox:
    """The sandbox in force for agents on this server."""

    mode: str
    #: The bubblewrap executable when the sandbox is in force, else ``None``.
    bwrap: str | None
    root: str

    @property
    def active(self) -> bool:
        """Whether agents run sandboxed."""
        return self.bwrap is not None

    @classmethod
    def detect(cls, mode: str, root: str) -> Sandbox:
        """The sandbox for ``mode``, tried once here (``off`` tries nothing)."""
        real_root = os.path.realpath(root)
        if mode == OFF:
            return cls(mode, None, real_root)
        bwrap = shutil.which("bwrap")
        if bwrap is not None and _works(bwrap, real_root):
            return cls(mode, bwrap, real_root)
        return cls(mode, None, real_root)

    def to_json(self) -> dict[str, object]:
        """What status and the panel say about it."""
        return {"mode": self.mode, "active": self.active, "text": self.text}

    @property
    def text(self) -> str:
        """One line for a person."""
        if self.active:
            return "Sandbox on: agents see the server's folder read-only."
        if self.mode == REQUIRED:
            return "Sandbox required but unavailable here: no agent can start."
        if self.mode == OFF:
            return "Sandbox off: an agent's own unrouted tools could change files."
        return "Sandbox unavailable here (bubblewrap missing or not permitted)."

    def command(
        self,
        command: Iterable[str],
        home: str,
        state_dirs: Iterable[str],
        hide_root: bool = False,
    ) -> list[str]:
        """The argv that starts ``command`` under this sandbox.

        Raises :class:`SandboxRequired` when the sandbox is required and not in force. The
        agent's state folders under ``home`` that lie inside the root are created and stay
        writable, and so does the temporary folder. With ``hide_root`` the agent sees an
        empty root; otherwise settings folders (``.gemini``, ``.claude``, ...) inside the
        root that are not the agent's own state are hidden.
        """
        if self.bwrap is None:
            if self.mode == REQUIRED:
                raise SandboxRequired
            return list(command)
        state = [os.path.realpath(os.path.join(home, d)) for d in state_dirs]
        writable = []
        for real in [*state, os.path.realpath(tempfile.gettempdir())]:
            if inside(real, self.root) and real != self.root:
                os.makedirs(real, exist_ok=True)
                writable.append(real)
        hidden = [
            folder
            for name in SETTINGS_FOLDERS
            if os.path.isdir(folder := os.path.join(self.root, name)) and folder not in state
        ]
        argv = list(command)
        shown = sorted(
            {f for f in runtime_folders(argv) if inside(f, self.root) and f != self.root}
        )
        notebooks: list[str] = []
        if not hide_root:
            listed = notebooks_in(self.root)
            if listed is None:
                # Too many to hide one by one: the whole folder is hidden instead.
                hide_root = True
            else:
                notebooks = listed
        return wrap(self.bwrap, argv, self.root, writable, hide_root, hidden, shown, notebooks)


class SandboxRequired(Exception):
    """The admin requires the sandbox and it does not work here."""
