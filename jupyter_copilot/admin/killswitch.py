"""The invocation kill switch: `CopilotApp.tools_enabled` from every source, kept current.

The kill switch is engaged when *any* source says `CopilotApp.tools_enabled` is false, so a
user's own config can never lift an administrator's. There are two kinds of source:

(a) "config": what the server started with, apart from the live JSON files below: the
    command line, the Python config files (and any other config file the server and its
    extensions loaded, such as ``jupyter_config.json``), and the config object the server
    was given. It is fixed for the life of the server and computed once by `config_engaged`.
(b) "file": the *current* content of every ``jupyter_copilot_config.json`` and
    ``jupyter_server_config.json`` in the directories of the Jupyter config path. `KillSwitch`
    re-checks them on every `KillSwitch.state` call (a few `os.stat` calls) and from a
    periodic callback, so an edit takes effect without a restart, in both directions. A file
    that exists but cannot be read, is not JSON, or whose `tools_enabled` is not a boolean
    counts as engaged (fail closed).

How (a) is told apart from (b) at startup. The trait value `app.tools_enabled` merges every
source, the JSON files included, so (a) is derived as follows:

- the command-line config of the server and of every extension app (`cli_config`), and every
  config file those apps loaded except the (b) files, are read again one by one; any of them
  saying False engages (a);
- the config object the server was given cannot be separated from file contents after the
  merge, so: if the merged trait is False and no (b) file said False at startup, the False
  came from outside the (b) files and (a) is engaged. If a (b) file did say False at
  startup, (a) is engaged only through the command line or another config file.

Known limit: a config object saying False that a (b) file saying True overrides during the
merge is not seen (traitlets merges files over the given object, so the trait reads True).
Python config files and the command line are unaffected by this limit.

Paths are never logged at INFO or above (only file names); full paths go to DEBUG.
"""

from __future__ import annotations

import enum
import json
import logging
import os
import stat
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jupyter_core.paths import jupyter_config_dir, jupyter_config_path
from tornado.ioloop import PeriodicCallback
from traitlets import Bool, TraitError
from traitlets.config import Config
from traitlets.config.loader import (
    DeferredConfigString,
    JSONFileConfigLoader,
    PyFileConfigLoader,
)

#: The live config files (source "file"), looked for in every directory of the config path.
JSON_FILE_NAMES = ("jupyter_copilot_config.json", "jupyter_server_config.json")

#: A file modified this recently is re-read on every check, even with an unchanged `os.stat`
#: signature: a rewrite within the file system's mtime granularity must never be missed.
#: A modification time in the future is not "recent" (it would be re-read forever).
RECENT_NS = 2_000_000_000

#: The largest live config file read, in bytes; a larger one is unusable (engages).
MAX_FILE_BYTES = 1024 * 1024

if TYPE_CHECKING:
    from typing import TypeAlias

    Logger: TypeAlias = logging.Logger | logging.LoggerAdapter[Any]


class FileReading(enum.Enum):
    """What one config file (or config object) says about `CopilotApp.tools_enabled`."""

    ABSENT = "absent"
    SILENT = "says nothing"
    ENABLED = "enabled"
    ENGAGED = "engaged"
    UNREADABLE = "unreadable"
    INVALID = "invalid"

    @property
    def verdict(self) -> bool | None:
        """None: no opinion; True: tools enabled; False: engaged (invalid counts as engaged)."""
        if self in (FileReading.ABSENT, FileReading.SILENT):
            return None
        return self is FileReading.ENABLED


@dataclass(frozen=True)
class KillSwitchState:
    """Whether the kill switch is engaged, and by which kind of source."""

    engaged: bool
    source: str | None  # "config", "file" or None when disengaged

    def to_json(self) -> dict[str, Any]:
        """The ``killSwitch`` object of ``copilot/api/status``."""
        return {"engaged": self.engaged, "source": self.source}


# -- pure logic --------------------------------------------------------------------------------


def config_reading(config: Mapping[str, Any]) -> FileReading:
    """Read ``{"CopilotApp": {"tools_enabled": ...}}`` from parsed config (JSON or traitlets).

    Command-line values arrive as unparsed strings and are parsed like traitlets does.
    """
    section = config.get("CopilotApp")
    if section is None:
        return FileReading.SILENT
    if not isinstance(section, Mapping):
        return FileReading.INVALID
    if "tools_enabled" not in section:
        return FileReading.SILENT
    value = section["tools_enabled"]
    if isinstance(value, DeferredConfigString):
        try:
            value = Bool().from_string(str(value))
        except (TraitError, ValueError):
            return FileReading.INVALID
    if not isinstance(value, bool):
        return FileReading.INVALID
    return FileReading.ENABLED if value else FileReading.ENGAGED


def file_reading(raw_text: str | None) -> FileReading:
    """Classify the text of a JSON config file; None means the file does not exist."""
    if raw_text is None:
        return FileReading.ABSENT
    try:
        data = json.loads(raw_text)
    except (ValueError, RecursionError):
        return FileReading.INVALID
    if not isinstance(data, dict):
        return FileReading.INVALID
    return config_reading(data)


def file_verdict(raw_text: str | None) -> bool | None:
    """None: says nothing (or absent); False: engaged, also when invalid; True: enabled."""
    return file_reading(raw_text).verdict


def combine(config_engaged: bool, file_verdicts: Iterable[bool | None]) -> KillSwitchState:
    """The kill switch state: "config" wins over "file"; any False from a file engages."""
    if config_engaged:
        return KillSwitchState(True, "config")
    if any(verdict is False for verdict in file_verdicts):
        return KillSwitchState(True, "file")
    return KillSwitchState(False, None)


def decide_config_engaged(
    merged_tools_enabled: bool,
    static_verdicts: Iterable[bool | None],
    json_said_false_at_startup: bool,
) -> bool:
    """The rule of the module docstring for source (a).

    ``static_verdicts`` come from the command line and the non-live config files, read one
    by one; ``merged_tools_enabled`` is the app's trait after every source was merged.
    """
    if any(verdict is False for verdict in static_verdicts):
        return True
    return not merged_tools_enabled and not json_said_false_at_startup


def candidate_paths(directories: Iterable[str]) -> list[str]:
    """Every live JSON config path: each directory times `JSON_FILE_NAMES`, in order."""
    return [os.path.join(d, name) for d in directories for name in JSON_FILE_NAMES]


def unique_directories(directories: Iterable[str]) -> list[str]:
    """The directories in their order, without empty entries and repeats."""
    seen: set[str] = set()
    result = []
    for directory in directories:
        key = os.path.normcase(os.path.abspath(directory)) if directory else ""
        if key and key not in seen:
            seen.add(key)
            result.append(directory)
    return result


# -- reading files -----------------------------------------------------------------------------


def read_json_file(path: str, log: Logger | None = None) -> FileReading:
    """Read one live JSON config file; logs a warning (file name only) when it is unusable.

    Only a regular file of at most :data:`MAX_FILE_BYTES` is read, and it is opened without
    blocking, so that a FIFO or a device at a config path cannot freeze the server. Anything
    else there (a FIFO, a folder, a dangling symlink, a huge file) is unusable: it engages.
    """
    try:
        raw = read_regular_file(path)
    except (FileNotFoundError, NotADirectoryError):
        if os.path.lexists(path):
            _warn_unusable(log, path, "a symlink to nothing")
            return FileReading.UNREADABLE
        return FileReading.ABSENT
    except (OSError, ValueError) as e:
        _warn_unusable(log, path, str(e) or type(e).__name__)
        return FileReading.UNREADABLE
    try:
        reading = file_reading(raw.decode("utf-8"))
    except UnicodeDecodeError:
        _warn_unusable(log, path, "not UTF-8")
        return FileReading.UNREADABLE
    if reading is FileReading.INVALID:
        _warn_unusable(log, path, "not a JSON object with a boolean CopilotApp.tools_enabled")
    return reading


def read_regular_file(path: str) -> bytes:
    """The bytes of a regular file of at most `MAX_FILE_BYTES`; ValueError for anything else."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("not a regular file")
        if st.st_size > MAX_FILE_BYTES:
            raise ValueError("larger than the limit")
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_FILE_BYTES:
                raise ValueError("larger than the limit")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_static_file(path: str, log: Logger | None = None) -> FileReading:
    """Read a config file that counts as source (a): ``.py`` is executed like traitlets does."""
    directory, name = os.path.split(path)
    loader_class = PyFileConfigLoader if name.endswith(".py") else JSONFileConfigLoader
    try:
        config: Config = loader_class(name, path=directory or None).load_config()
    except Exception as e:  # a config file may raise anything
        if os.path.exists(path):
            _warn_unusable(log, path, type(e).__name__)
            return FileReading.UNREADABLE
        return FileReading.ABSENT
    return config_reading(config)


def _warn_unusable(log: Logger | None, path: str, reason: str) -> None:
    if log is None:
        return
    log.warning(
        "jupyter-copilot: a Jupyter config file in the config path (%s) could not be read; "
        "it engages the kill switch until it is fixed or removed.",
        os.path.basename(path),
    )
    log.debug("jupyter-copilot: unusable config file %s: %s", path, reason)


# -- the live switch ---------------------------------------------------------------------------


@dataclass
class _Seen:
    signature: tuple[int, int, int, int]
    reading: FileReading


class KillSwitch:
    """The kill switch of one server: source (a) fixed at startup, source (b) kept current.

    `state` is cheap (one `os.stat` per candidate file, reading only files that changed), so
    call it on every tool call and every Keep. `start` additionally polls and reports changes.
    """

    def __init__(self, config_engaged: bool, directories: Sequence[str], log: Logger) -> None:
        self.config_engaged = config_engaged
        self.directories = unique_directories(directories)
        self.log = log
        self._paths = candidate_paths(self.directories)
        self._seen: dict[str, _Seen] = {}
        self._callback: PeriodicCallback | None = None
        self._notified: KillSwitchState | None = None

    def state(self) -> KillSwitchState:
        """The current state, re-checking the live JSON files."""
        now = time.time_ns()
        verdicts: list[bool | None] = []
        for path in self._paths:
            try:
                st = os.stat(path)
            except (FileNotFoundError, NotADirectoryError):
                if not os.path.lexists(path):
                    self._seen.pop(path, None)  # a deleted file stops counting
                    continue
                # A symlink to nothing is not an absent file: it fails closed.
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
            except OSError as e:
                # Cannot even tell whether the file is there: fail closed.
                signature = (-1, -1, -1, e.errno or 0)
                seen = self._seen.get(path)
                if seen is None or seen.signature != signature:
                    _warn_unusable(self.log, path, type(e).__name__)
                    self._seen[path] = _Seen(signature, FileReading.UNREADABLE)
                verdicts.append(False)
                continue
            signature = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev)
            seen = self._seen.get(path)
            recent = 0 <= now - st.st_mtime_ns < RECENT_NS
            if seen is None or seen.signature != signature or recent:
                seen = self._reread(path, signature, seen)
            verdicts.append(seen.reading.verdict)
        return combine(self.config_engaged, verdicts)

    def _reread(
        self, path: str, signature: tuple[int, int, int, int], previous: _Seen | None
    ) -> _Seen:
        # Warn once per change of an unusable file, not on every re-read of a recent one.
        repeat = previous is not None and previous.signature == signature
        reading = read_json_file(path, None if repeat else self.log)
        seen = _Seen(signature, reading)
        self._seen[path] = seen
        return seen

    def start(
        self, on_change: Callable[[KillSwitchState], None], interval_seconds: float = 0.5
    ) -> None:
        """Poll on the current IOLoop and call ``on_change(state)`` whenever the state changes.

        Call it from the server's event loop (for example in
        ``_start_jupyter_server_extension``). Changes are compared with the state at start,
        not with what `state` calls in between returned, so none is missed.
        """
        self.stop()
        self._notified = self.state()

        def poll() -> None:
            current = self.state()
            if current == self._notified:
                return
            self._notified = current
            try:
                on_change(current)
            except Exception:
                self.log.error("jupyter-copilot: kill switch change handler failed", exc_info=True)

        self._callback = PeriodicCallback(poll, interval_seconds * 1000)
        self._callback.start()

    def stop(self) -> None:
        """Stop polling; `state` keeps working."""
        if self._callback is not None:
            self._callback.stop()
            self._callback = None


# -- startup: what the app read ----------------------------------------------------------------


def config_directories(app: Any) -> list[str]:
    """The directories an ExtensionApp (or ServerApp) reads config from, in its own order.

    That is `jupyter_core.paths.jupyter_config_path()` with the server's ``config_dir`` put
    first when it is missing (`JupyterApp.config_file_paths`, which `ExtensionApp` takes from
    its server).
    """
    return unique_directories(app.config_file_paths)


def config_engaged(app: Any) -> bool:
    """Whether source (a) engages the kill switch; ``app`` is the linked `CopilotApp`.

    Call it once the app's config is loaded (for example in ``initialize_settings``).
    """
    log = app.log
    live = {_path_key(p) for p in candidate_paths(config_directories(app))}
    apps = [app]
    serverapp = getattr(app, "serverapp", None)
    if serverapp is not None:
        apps.append(serverapp)
        manager = getattr(serverapp, "extension_manager", None)
        if manager is not None:
            for group in manager.extension_apps.values():
                apps.extend(a for a in group if a is not app)
    static: list[bool | None] = []
    files: dict[str, None] = {}
    for source in apps:
        static.append(config_reading(source.cli_config).verdict)
        files.update(dict.fromkeys(getattr(source, "loaded_config_files", [])))
    for path in files:
        if _path_key(path) not in live:
            static.append(read_static_file(path, log).verdict)
    json_false = any(
        read_json_file(path) is FileReading.ENGAGED
        for path in candidate_paths(config_directories(app))
    )
    return decide_config_engaged(bool(app.tools_enabled), static, json_false)


def default_config_directories() -> list[str]:
    """The config directories a server started now would read (`JupyterApp.config_file_paths`)."""
    path = jupyter_config_path()
    config_dir = jupyter_config_dir()
    if config_dir not in path:
        path.insert(0, config_dir)
    return unique_directories(path)


def _path_key(path: str) -> str:
    return os.path.normcase(os.path.realpath(path))
