"""The agent sandbox: deny by default, proven at start (docs/security.md, "The sandbox").

Where bubblewrap (``bwrap``) works, an agent runs with

- the whole file system read-only, and private empty ``/tmp``, ``/var/tmp`` and ``/run``;
- the person's HOME replaced by an empty read-only folder, and its own HOME (``$HOME`` in
  the sandbox) a product-owned folder per agent, so that nothing it writes there (settings,
  hooks) runs later outside the sandbox; the few credential files an agent needs are bound
  in read-only;
- the Jupyter runtime, data and config folders (the server's token, kernel connection files,
  config that runs at the next start, the conversation store) replaced by empty folders;
- the server's folder read-only when the conversation granted ``files``, else empty; every
  notebook in it an empty file (notebooks are read through the notebook tools only), and
  agent settings folders in it (``.gemini``, ``.claude``...) hidden;
- no network but its own loopback, on which ``egress.py`` forwards exactly what the agent
  needs (our MCP endpoint, its model API);
- every capability dropped (also as root), in a user namespace that cannot make another,
  a PID namespace, a new session (no TIOCSTI), dying with the server, and the seccomp
  filter of ``seccomp.py``.

``CopilotApp.agent_sandbox``: ``auto`` uses it when it works here, ``required`` starts no
agent without it, ``off`` never uses it. Whether it works is proven once, at start, by a
probe that tries to escape it (``sandbox_probe.py``): each property is judged by its effect
outside the sandbox where it can be, and status reports each.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from hashlib import sha256

from . import seccomp

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

#: Folders every agent gets private and empty.
PRIVATE_PLACES = ("/tmp", "/var/tmp", "/run")

#: Where, inside the sandbox, the agent's own HOME and its network sockets are.
AGENT_HOME = "/run/jupyter-copilot/home"
NET_DIR = "/run/jupyter-copilot/net"

#: The properties the start-up probe proves, in the order status lists them, with the words
#: a person reads when one does not hold.
CHECKS: dict[str, str] = {
    "filesReadOnly": "the server's folder, HOME and the Python install are read-only",
    "secretsHidden": "the Jupyter runtime folder (token, kernel keys) and HOME are hidden",
    "networkIsolated": "the loopback network (Jupyter, kernels) is unreachable",
    "mountRefused": "mounting and remounting are refused",
    "capabilitiesDropped": "every capability is dropped",
    "seccomp": "the system call filter is on",
    "userNamespacesOff": "no new user namespace can be made",
}


def inside(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it (both already absolute and resolved)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _interpreter(script: str, path: str | None) -> str | None:
    """The program a ``#!`` script names (through ``env``), resolved on ``path``."""
    try:
        with open(script, "rb") as f:
            head = f.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
        if not words:
            return None
    found = shutil.which(words[0], path=path)
    return os.path.realpath(found) if found else None


def _install_folder(program: str) -> str:
    """The folder a program was installed with: its ``node_modules`` or its prefix."""
    marker = f"{os.sep}node_modules{os.sep}"
    if marker in program:
        return program.split(marker, 1)[0] + marker.rstrip(os.sep)
    return os.path.dirname(os.path.dirname(program))


def runtime_folders(command: Sequence[str], path: str | None = None) -> list[str]:
    """Folders the agent's program runs from: this Python, the command's package and its
    interpreter (``node`` for a ``#!/usr/bin/env node`` script).

    They may lie in a place the sandbox hides (HOME, ``/tmp``, the server's folder); they
    are shown again there, read-only, so that the agent can start.
    """
    folders = [sys.prefix, sys.base_prefix, os.path.dirname(os.path.dirname(__file__))]
    found = shutil.which(command[0], path=path) if command else None
    if found is not None:
        real = os.path.realpath(found)
        folders += [os.path.dirname(real), _install_folder(real)]
        interpreter = _interpreter(real, path)
        if interpreter is not None:
            folders.append(_install_folder(interpreter))
    # A script the command names by its full path (``python /opt/agent/main.py``).
    folders += [
        os.path.dirname(arg) for arg in command[1:] if os.path.isabs(arg) and os.path.isfile(arg)
    ]
    return sorted({os.path.realpath(f) for f in folders})


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


@dataclass(frozen=True)
class Layout:
    """What an agent sees of the machine; every path absolute and resolved."""

    #: The server's folder.
    root: str
    #: The person's HOME (hidden), or None.
    home: str | None = None
    #: Show the root empty instead of read-only.
    hide_root: bool = False
    #: Notebooks in the root, each shown as an empty file.
    notebooks: tuple[str, ...] = ()
    #: Settings folders in the root, hidden.
    settings: tuple[str, ...] = ()
    #: Folders the program runs from, shown again read-only where they lie in a hidden place.
    shown: tuple[str, ...] = ()
    #: Existing folders and files that are never visible (Jupyter's folders, HOME's
    #: dotfiles when the root is HOME).
    secret_dirs: tuple[str, ...] = ()
    secret_files: tuple[str, ...] = ()
    #: The agent's own HOME outside, bound writable at :data:`AGENT_HOME`.
    agent_home: str | None = None
    #: Credential files (outside path, path under the agent's HOME), bound read-only.
    credentials: tuple[tuple[str, str], ...] = ()
    #: The folder of the agent's network sockets outside, bound at :data:`NET_DIR`.
    net_dir: str | None = None
    #: The folder the agent starts in, inside.
    cwd: str = "/"
    #: The file descriptor bubblewrap reads the seccomp filter from.
    seccomp_fd: int | None = None


def wrap(bwrap: str, command: Iterable[str], layout: Layout) -> list[str]:
    """The bubblewrap argv that runs ``command`` in ``layout``.

    Mounts are made in order, a later one covering an earlier one: the read-only machine;
    the server's folder; the private places and HOME (the server's folder brought back when
    it lies in one); the program's folders; the secrets; the agent's own folders.
    """
    root = layout.root
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]

    def root_layer() -> list[str]:
        if root == "/":
            return []
        if layout.hide_root:
            return ["--tmpfs", root]
        out = ["--ro-bind", root, root]
        for folder in layout.settings:
            out += ["--tmpfs", folder, "--remount-ro", folder]
        for notebook in layout.notebooks:
            out += ["--ro-bind", "/dev/null", notebook]
        return out

    argv += root_layer()
    hidden = [root] if layout.hide_root and root != "/" else []
    read_only_later = list(hidden)
    places = [*PRIVATE_PLACES, *([layout.home] if layout.home else [])]
    for place in places:
        if place == "/" or (place == root and not layout.hide_root):
            # HOME is the server's folder, shown: its dotfiles are secrets instead.
            continue
        argv += ["--tmpfs", place]
        hidden.append(place)
        if place not in ("/tmp", "/var/tmp"):
            read_only_later.append(place)
        if inside(root, place):
            argv += root_layer()

    def visible(path: str) -> bool:
        """Whether ``path`` can still be seen: not under a hidden place (but in the root
        brought back there) nor under another secret."""
        if any(inside(path, d) and path != d for d in layout.secret_dirs):
            return False
        covered = any(inside(path, place) for place in hidden)
        return not covered or (not layout.hide_root and inside(path, root))

    def hide(within: Callable[[str], bool]) -> list[str]:
        out: list[str] = []
        for folder in layout.secret_dirs:
            if within(folder):
                out += ["--tmpfs", folder, "--remount-ro", folder]
        for path in layout.secret_files:
            if within(path):
                out += ["--ro-bind", "/dev/null", path]
        return out

    argv += hide(visible)
    # The program's folders, where a hidden place or a secret covers them; then the secrets
    # inside those folders again (a virtualenv's share/jupyter).
    covering = [*hidden, *layout.secret_dirs]
    shown = [f for f in layout.shown if any(inside(f, c) for c in covering)]
    for folder in shown:
        argv += ["--ro-bind", folder, folder]
    argv += hide(lambda p: any(inside(p, f) and p != f for f in shown))
    if layout.agent_home is not None:
        argv += ["--bind", layout.agent_home, AGENT_HOME]
        for outside, under_home in layout.credentials:
            argv += ["--ro-bind", outside, os.path.join(AGENT_HOME, under_home)]
    if layout.net_dir is not None:
        argv += ["--ro-bind", layout.net_dir, NET_DIR]
    for place in read_only_later:
        argv += ["--remount-ro", place]
    argv += [
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--new-session",
        "--die-with-parent",
        "--chdir",
        layout.cwd,
    ]
    if layout.seccomp_fd is not None:
        argv += ["--seccomp", str(layout.seccomp_fd)]
    return [*argv, "--", *command]


def jupyter_folders() -> list[str]:
    """Every folder Jupyter keeps state, keys or config in, as they are configured now."""
    from jupyter_core import paths

    folders = [
        paths.jupyter_runtime_dir(),
        paths.jupyter_data_dir(),
        paths.jupyter_config_dir(),
        *paths.jupyter_path(),
        *paths.jupyter_config_path(),
    ]
    return list(dict.fromkeys(os.path.realpath(f) for f in folders))


def agent_home(agent_id: str) -> str:
    """The product-owned HOME of one agent, in the Jupyter data folder; made 0700."""
    from jupyter_core.paths import jupyter_data_dir

    slug = re.sub(r"[^A-Za-z0-9._-]", "_", agent_id)[:40].strip(".") or "agent"
    digest = sha256(agent_id.encode("utf-8")).hexdigest()[:8]
    folder = os.path.join(jupyter_data_dir(), "copilot", "agent-homes", f"{slug}-{digest}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    os.chmod(folder, 0o700)
    return os.path.realpath(folder)


#: The largest settings file copied into an agent's own HOME.
MAX_SETTINGS_BYTES = 1_000_000


def copy_settings(
    home: str, agent_home_dir: str, folders: Iterable[str], skip: Iterable[str] = ()
) -> None:
    """Copy the files directly in the person's settings ``folders`` (``.gemini``...) into
    the agent's own HOME, over what is there; never links, credentials or large files."""
    skipped = {os.path.normpath(s) for s in skip}
    for folder in folders:
        source = os.path.join(home, folder)
        if os.path.islink(source) or not os.path.isdir(source):
            continue
        target = os.path.join(agent_home_dir, folder)
        os.makedirs(target, mode=0o700, exist_ok=True)
        with contextlib.suppress(OSError), os.scandir(source) as entries:
            for entry in entries:
                relative = os.path.normpath(os.path.join(folder, entry.name))
                if (
                    relative in skipped
                    or not entry.is_file(follow_symlinks=False)
                    or entry.stat(follow_symlinks=False).st_size > MAX_SETTINGS_BYTES
                ):
                    continue
                with contextlib.suppress(OSError):
                    destination = os.path.join(target, entry.name)
                    if os.path.islink(destination):
                        os.unlink(destination)
                    shutil.copyfile(entry.path, destination, follow_symlinks=False)


def rehomed(env: Mapping[str, str], home: str) -> dict[str, str]:
    """The variables of ``env`` that name paths under ``home``, naming the same paths under
    the agent's own HOME inside the sandbox."""
    if home == "/":
        return {}
    return {
        name: AGENT_HOME + value[len(home) :]
        for name, value in env.items()
        if value == home or value.startswith(home.rstrip(os.sep) + os.sep)
    }


def seccomp_file() -> int | None:
    """A readable descriptor holding the seccomp filter, or None on an unknown machine.

    bubblewrap reads it to its end; each start needs its own, closed by the caller once the
    sandbox started.
    """
    if not seccomp.supported():
        return None
    read, write = os.pipe()
    program = seccomp.program()
    # A filter is a few hundred bytes: far under a pipe's buffer.
    os.write(write, program)
    os.close(write)
    return read


@dataclass
class Launch:
    """How to start one sandboxed program: its argv, the descriptors it inherits, the
    environment it needs, and what to close once it started."""

    argv: list[str]
    pass_fds: tuple[int, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    def started(self) -> None:
        """Close the descriptors only the starting sandbox needed."""
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.pass_fds = ()


@dataclass(frozen=True)
class Sandbox:
    """The sandbox in force for agents on this server."""

    mode: str
    #: The bubblewrap executable when the sandbox is in force, else ``None``.
    bwrap: str | None
    root: str
    #: What the start-up probe proved: each property of :data:`CHECKS`, true when it held.
    checks: dict[str, bool] = field(default_factory=dict)
    #: Why the sandbox does not work here, when it does not (for the log and status).
    reason: str | None = None
    #: Files and folders hidden on top of Jupyter's own (the conversation store).
    extra_secrets: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        """Whether agents run sandboxed."""
        return self.bwrap is not None

    @classmethod
    def detect(cls, mode: str, root: str, extra_secrets: Iterable[str] = ()) -> Sandbox:
        """The sandbox for ``mode``, proven once here by :func:`self_test` (``off`` tries
        nothing). It is in force only when every property held."""
        real_root = os.path.realpath(root)
        secrets = tuple(os.path.realpath(s) for s in extra_secrets)
        if mode == OFF:
            return cls(mode, None, real_root, extra_secrets=secrets)
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            return cls(mode, None, real_root, reason="bubblewrap is not installed")
        trial = cls(mode, bwrap, real_root, extra_secrets=secrets)
        checks, reason = self_test(trial)
        if reason is None and all(checks.get(name) for name in CHECKS):
            return cls(mode, bwrap, real_root, checks, None, secrets)
        if reason is None:
            failed = [name for name in CHECKS if not checks.get(name)]
            reason = "it did not hold: " + ", ".join(failed)
        return cls(mode, None, real_root, checks, reason, secrets)

    def to_json(self) -> dict[str, object]:
        """What status and the panel say about it."""
        return {
            "mode": self.mode,
            "active": self.active,
            "text": self.text,
            "checks": [
                {"name": name, "ok": bool(self.checks.get(name)), "text": text}
                for name, text in CHECKS.items()
                if name in self.checks
            ],
        }

    @property
    def text(self) -> str:
        """One line for a person."""
        if self.active:
            return (
                "Sandbox on: the machine is read-only to agents, your home folder and "
                "Jupyter's keys are hidden, and they reach only their model's API."
            )
        if self.mode == OFF:
            return "Sandbox off: an agent's own unrouted tools could change files."
        failed = [CHECKS[name] for name, ok in self.checks.items() if not ok]
        why = (
            f" (not proven: {'; '.join(failed)})"
            if failed
            else f" ({self.reason})"
            if self.reason
            else ""
        )
        if self.mode == REQUIRED:
            return f"Sandbox required but unavailable here{why}: no agent can start."
        return f"Sandbox unavailable here{why}."

    def launch(
        self,
        command: Sequence[str],
        *,
        agent_id: str,
        hide_root: bool = False,
        private_cwd: bool = False,
        credentials: Iterable[str] = (),
        settings: Iterable[str] = (),
        env: Mapping[str, str] | None = None,
        net_dir: str | None = None,
        path: str | None = None,
        program: Sequence[str] | None = None,
    ) -> Launch:
        """How to start ``command`` under this sandbox (``program``: the agent's own command,
        when ``command`` wraps it; the folders it runs from are shown).

        Raises :class:`SandboxRequired` when the sandbox is required and not in force; without
        the sandbox the command runs as it is. ``credentials`` are paths under the person's
        HOME that the agent needs to log in, bound read-only into its own HOME when they
        exist; the files of its ``settings`` folders there are copied into its own HOME at
        every start (what the agent wrote into its copy does not outlive it); paths under the
        person's HOME in ``env`` name the same paths under its own; ``net_dir`` holds the
        sockets ``egress.py`` serves.
        """
        if self.bwrap is None:
            if self.mode == REQUIRED:
                raise SandboxRequired
            return Launch(list(command))
        home_dir = agent_home(agent_id)
        real_home = os.path.realpath(os.path.expanduser("~"))
        copy_settings(real_home, home_dir, settings, skip=credentials)
        fd = seccomp_file()
        layout = self.layout(
            list(program or command),
            hide_root=hide_root,
            agent_home_dir=home_dir,
            credentials=tuple(
                (os.path.join(real_home, c), c)
                for c in credentials
                if os.path.isfile(os.path.join(real_home, c))
            ),
            net_dir=net_dir,
            cwd="/tmp" if private_cwd else self.root,
            seccomp_fd=fd,
            path=path,
        )
        return Launch(
            wrap(self.bwrap, command, layout),
            (fd,) if fd is not None else (),
            {**rehomed(env or {}, real_home), "HOME": AGENT_HOME, "TMPDIR": "/tmp"},
        )

    def layout(
        self,
        command: Sequence[str],
        *,
        hide_root: bool = False,
        agent_home_dir: str | None = None,
        credentials: tuple[tuple[str, str], ...] = (),
        net_dir: str | None = None,
        cwd: str | None = None,
        seccomp_fd: int | None = None,
        path: str | None = None,
    ) -> Layout:
        """The layout for ``command`` as the machine is now (it looks through the root)."""
        home = os.path.realpath(os.path.expanduser("~"))
        root = self.root
        notebooks: list[str] = []
        if not hide_root:
            listed = notebooks_in(root)
            if listed is None:
                # Too many to hide one by one: the whole folder is hidden instead.
                hide_root = True
            else:
                notebooks = listed
        settings = [
            folder
            for name in SETTINGS_FOLDERS
            if os.path.isdir(folder := os.path.join(root, name)) and not hide_root
        ]
        secret_dirs = [d for d in jupyter_folders() if os.path.isdir(d)]
        secret_files: list[str] = []
        for extra in self.extra_secrets:
            if os.path.isdir(extra):
                secret_dirs.append(extra)
            elif os.path.exists(extra):
                secret_files.append(extra)
        if home == root and not hide_root and home != "/":
            # The server's folder is HOME: its files are shown, its dotfiles never.
            with contextlib.suppress(OSError):
                for entry in os.scandir(home):
                    if entry.name.startswith(".") and not entry.is_symlink():
                        target = secret_dirs if entry.is_dir() else secret_files
                        target.append(entry.path)
        return Layout(
            root=root,
            home=home if home != "/" and os.path.isdir(home) else None,
            hide_root=hide_root,
            notebooks=tuple(notebooks),
            settings=tuple(settings),
            shown=tuple(
                # Never HOME, a private place or one holding them: that would show it whole.
                f
                for f in runtime_folders(command, path)
                if not inside(home, f) and not any(inside(p, f) for p in PRIVATE_PLACES)
            ),
            secret_dirs=tuple(dict.fromkeys(secret_dirs)),
            secret_files=tuple(dict.fromkeys(secret_files)),
            agent_home=agent_home_dir,
            credentials=credentials,
            net_dir=net_dir,
            cwd=cwd or root,
            seccomp_fd=seccomp_fd,
        )


class SandboxRequired(Exception):
    """The admin requires the sandbox and it does not work here."""


# -- the start-up probe -------------------------------------------------------------------------

PROBE_SCRIPT = os.path.join(os.path.dirname(__file__), "sandbox_probe.py")


def _canary(folder: str) -> str | None:
    """A file with a secret in ``folder``, or None when it cannot be written."""
    name = os.path.join(folder, f".jupyter-copilot-canary-{uuid.uuid4().hex}")
    try:
        os.makedirs(folder, exist_ok=True)
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return None
    with os.fdopen(fd, "w") as f:
        f.write("canary")
    return name


def self_test(
    sandbox: Sandbox, run: Callable[..., subprocess.CompletedProcess[bytes]] = subprocess.run
) -> tuple[dict[str, bool], str | None]:
    """Try to escape ``sandbox`` as an agent would; each property of :data:`CHECKS` with
    whether it held, and why none could be tried, if so.

    Writes are judged outside by whether a file appeared; the network by whether a listener
    on the loopback outside was reached; reads by whether a canary's content came back.
    """
    assert sandbox.bwrap is not None
    from jupyter_core.paths import jupyter_runtime_dir

    home = os.path.realpath(os.path.expanduser("~"))
    tag = uuid.uuid4().hex
    writes = {
        place: os.path.join(place, f".jupyter-copilot-probe-{tag}")
        for place in dict.fromkeys([sandbox.root, home, os.path.realpath(sys.prefix)])
    }
    canaries = [c for c in (_canary(jupyter_runtime_dir()), _canary(home)) if c is not None]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    spec = {
        "read": canaries,
        "write": list(writes.values()),
        "connect": [["127.0.0.1", port]],
        "umount": [sandbox.root, "/"],
    }
    command = [sys.executable, "-I", "-S", PROBE_SCRIPT, json.dumps(spec)]
    fd = seccomp_file()
    try:
        layout = sandbox.layout(command, agent_home_dir=tempfile.mkdtemp(), seccomp_fd=fd)
        try:
            done = run(
                wrap(sandbox.bwrap, command, layout),
                capture_output=True,
                timeout=20,
                check=False,
                pass_fds=(fd,) if fd is not None else (),
            )
        finally:
            if layout.agent_home:
                shutil.rmtree(layout.agent_home, ignore_errors=True)
        try:
            seen = json.loads(done.stdout.decode("utf-8"))
        except ValueError:
            return {}, f"bubblewrap did not start here (exit code {done.returncode})"
        reached = False
        with contextlib.suppress(BlockingIOError):
            listener.accept()[0].close()
            reached = True
        landed = [p for p in writes.values() if os.path.lexists(p)]
        read_back = [c for c in canaries if seen.get("read", {}).get(c) == "canary"]
        status = seen.get("status", {})
        checks = {
            "filesReadOnly": not landed,
            "secretsHidden": not read_back,
            "networkIsolated": not reached and not any(seen.get("connect", {}).values()),
            "mountRefused": bool(seen.get("mount")) and not any(seen["mount"].values()),
            "capabilitiesDropped": status.get("CapEff") == 0 and status.get("CapBnd") == 0,
            "seccomp": status.get("Seccomp") == 2,
            "userNamespacesOff": seen.get("unshareUser") is False,
        }
        return checks, None
    except (OSError, subprocess.SubprocessError) as e:
        return {}, f"bubblewrap could not be run ({type(e).__name__})"
    finally:
        listener.close()
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
        for path in [*writes.values(), *canaries]:
            with contextlib.suppress(OSError):
                os.unlink(path)
