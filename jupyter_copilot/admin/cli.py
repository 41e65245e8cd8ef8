"""``jupyter copilot``: command-line tools, starting with the invocation kill switch.

``jupyter copilot kill-switch on|off|status [--user|--sys-prefix|--system]``. ``on`` and
``off`` write ``CopilotApp.tools_enabled`` into ``jupyter_copilot_config.json`` in one config
directory, chosen like ``jupyter server extension enable`` chooses it (default: sys.prefix).
Running servers re-read that file within 2 seconds (see `jupyter_copilot.admin.killswitch`).
The file is replaced atomically, so a server never reads half of it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import stat
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from typing import Any

from jupyter_core import paths

from .._version import __version__
from .killswitch import (
    JSON_FILE_NAMES,
    FileReading,
    combine,
    default_config_directories,
    read_json_file,
    read_static_file,
)

TARGET_NAME = "jupyter_copilot_config.json"

#: Config files a server reads once, at start, that may set the switch (source "config").
STARTUP_NAMES = (
    "jupyter_config.py",
    "jupyter_config.json",
    "jupyter_server_config.py",
    "jupyter_copilot_config.py",
)

DESCRIPTIONS = {
    FileReading.ABSENT: "not present",
    FileReading.SILENT: "says nothing about tools_enabled",
    FileReading.ENABLED: "enabled (tools_enabled = true)",
    FileReading.ENGAGED: "ENGAGED (tools_enabled = false)",
    FileReading.UNREADABLE: "UNREADABLE (counts as engaged)",
    FileReading.INVALID: "INVALID (counts as engaged)",
}

RUNNING_SERVER_NOTE = (
    "A running server can also be engaged by its command line "
    "(--CopilotApp.tools_enabled=False), the config object it was started with, or another "
    "app's config file; its GET copilot/api/status shows its own view."
)


class CommandError(Exception):
    """A failure to report in one line, with exit code 1."""


# -- where to write (the same choice as jupyter_server/extension/serverextension.py) ----------


def target_directory(location: str) -> str:
    """The config directory for ``user``, ``sys-prefix`` (the default) or ``system``.

    Mirrors ``jupyter_server.extension.serverextension._get_config_dir``: ``--user`` is
    `jupyter_config_dir()`, ``--sys-prefix`` is ``ENV_CONFIG_PATH[0]`` and ``--system`` is
    ``SYSTEM_CONFIG_PATH[0]``.
    """
    if location == "user":
        return paths.jupyter_config_dir()
    if location == "system":
        return paths.SYSTEM_CONFIG_PATH[0]
    return paths.ENV_CONFIG_PATH[0]


def updated_config(existing_text: str | None, tools_enabled: bool) -> dict[str, Any]:
    """The config file content with ``CopilotApp.tools_enabled`` set, other keys kept.

    Raises ValueError when the existing text is not a JSON object with an object
    ``CopilotApp`` (the file is then left alone).
    """
    data: Any = {}
    if existing_text is not None and existing_text.strip():
        try:
            data = json.loads(existing_text)
        except RecursionError as e:
            raise ValueError("nested too deeply") from e
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    section = data.setdefault("CopilotApp", {})
    if not isinstance(section, dict):
        raise ValueError("CopilotApp is not a JSON object")
    section["tools_enabled"] = tools_enabled
    return data


def write_atomically(path: str, text: str) -> None:
    """Replace ``path`` with ``text`` through a temporary file in the same directory."""
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask  # what a plain open() would create; servers must read it
    fd, temporary = tempfile.mkstemp(prefix=".jupyter_copilot_config.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def set_tools_enabled(directory: str, tools_enabled: bool) -> str:
    """Write the switch into ``directory``'s `TARGET_NAME`; returns the file's path."""
    path = os.path.join(directory, TARGET_NAME)
    try:
        with open(path, encoding="utf-8") as f:
            existing: str | None = f.read()
    except (FileNotFoundError, NotADirectoryError):
        existing = None  # writing will say what is wrong with the directory
    except (OSError, UnicodeDecodeError) as e:
        raise CommandError(f"cannot read {path}: {_reason(e)}") from e
    try:
        data = updated_config(existing, tools_enabled)
    except ValueError as e:
        raise CommandError(
            f"{path} is not valid config ({e}); fix or remove it. While it is invalid it "
            "engages the kill switch."
        ) from e
    try:
        write_atomically(path, json.dumps(data, indent=2) + "\n")
    except OSError as e:
        raise CommandError(f"cannot write {path}: {_reason(e)}") from e
    return path


# -- what the config path says ------------------------------------------------------------------


def live_readings(directories: Sequence[str]) -> list[tuple[str, FileReading]]:
    """Every live JSON config file in the directories and what it says (absent included)."""
    return [
        (os.path.join(d, name), read_json_file(os.path.join(d, name)))
        for d in directories
        for name in JSON_FILE_NAMES
    ]


def startup_readings(directories: Sequence[str]) -> list[tuple[str, FileReading]]:
    """The start-time config files present in the directories and what they say."""
    found = []
    for d in directories:
        for name in STARTUP_NAMES:
            path = os.path.join(d, name)
            if os.path.exists(path):
                found.append((path, read_static_file(path)))
    return found


def engaging(readings: Sequence[tuple[str, FileReading]]) -> list[tuple[str, FileReading]]:
    """The readings that engage the kill switch."""
    return [(path, reading) for path, reading in readings if reading.verdict is False]


def print_sources(title: str, readings: Sequence[tuple[str, FileReading]]) -> None:
    """List the files that engage the switch, each with how to lift it."""
    print(title)
    for path, reading in readings:
        flag = _flag_for(os.path.dirname(path))
        if os.path.basename(path) == TARGET_NAME and flag:
            hint = f"jupyter copilot kill-switch off {flag}"
        else:
            hint = "edit or remove it"
        print(f"  {path}: {DESCRIPTIONS[reading]}; to lift it: {hint}")


def status(location: str) -> None:
    """Print what every config file says, then the verdict."""
    directories = default_config_directories()
    target = target_directory(location)
    live = live_readings(directories)
    startup = startup_readings(directories)
    print("Live config files (running servers re-read them within 2 seconds):")
    for d in directories:
        marker = "   <- on/off with these options write here" if _same(d, target) else ""
        print(f"  {d}{marker}")
        for path, reading in live:
            if os.path.dirname(path) == d:
                print(f"    {os.path.basename(path):<30} {DESCRIPTIONS[reading]}")
    print("Config files read when a server starts (a change needs a restart):")
    for path, reading in startup:
        print(f"  {path}: {DESCRIPTIONS[reading]}")
    if not startup:
        print("  none found")
    state = combine(False, [r.verdict for _, r in live])
    at_start = engaging(startup)
    if state.engaged and at_start:
        print(
            "Verdict from these files: ENGAGED by a live config file, and for servers started "
            "with the start-time files above."
        )
    elif state.engaged:
        print("Verdict from these files: ENGAGED by a live config file.")
    elif at_start:
        print("Verdict from these files: ENGAGED for servers started with the files above.")
    else:
        print("Verdict from these files: not engaged.")
    print(RUNNING_SERVER_NOTE)


def switch(location: str, engage: bool) -> None:
    """``on`` / ``off``: write the chosen file and say what the switch now is."""
    directory = target_directory(location)
    path = set_tools_enabled(directory, not engage)
    directories = default_config_directories()
    if not any(_same(d, directory) for d in directories):
        print(
            f"Note: {directory} is not in this environment's Jupyter config path, so servers "
            "started here will not read it.",
            file=sys.stderr,
        )
    if engage:
        print(f"Kill switch ENGAGED: wrote CopilotApp.tools_enabled = false to {path}.")
        print("Running servers refuse tool calls and Keep within 2 seconds, without a restart.")
        return
    print(f"Wrote CopilotApp.tools_enabled = true to {path}.")
    still_live = engaging(live_readings(directories))
    at_start = engaging(startup_readings(directories))
    if still_live:
        print_sources("The kill switch stays ENGAGED because of another config file:", still_live)
    if at_start:
        print_sources(
            "Servers started with these files stay ENGAGED until restarted without them:",
            at_start,
        )
    if not still_live and not at_start:
        print("No config file engages the kill switch any more; running servers resume tool")
        print("calls within 2 seconds.")
    print(RUNNING_SERVER_NOTE)


# -- the command line ---------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``jupyter copilot``."""
    parser = argparse.ArgumentParser(
        prog="jupyter copilot",
        description="Command-line tools for jupyter-copilot.",
        epilog="Run 'jupyter copilot COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"jupyter-copilot {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    kill = commands.add_parser(
        "kill-switch",
        help="engage, release or inspect the tool invocation kill switch",
        description=(
            "The kill switch stops every jupyter-copilot tool invocation and Keep (reading "
            "context still works). It is engaged while ANY config source says "
            "CopilotApp.tools_enabled = false, so releasing it in one directory does not lift "
            "it in another. on/off write jupyter_copilot_config.json in one Jupyter config "
            "directory; running servers pick the change up within 2 seconds."
        ),
        epilog=(
            "examples:\n"
            "  jupyter copilot kill-switch on --system   stop tool calls for every user\n"
            "  jupyter copilot kill-switch off           release it in this environment\n"
            "  jupyter copilot kill-switch status        what every config file says"
        ),
        formatter_class=_DescriptionFormatter,
    )
    kill.add_argument(
        "action",
        choices=("on", "off", "status"),
        help=(
            "on: engage (tools_enabled = false); off: release (tools_enabled = true) in the "
            "chosen directory; status: what every config file says"
        ),
    )
    where = kill.add_mutually_exclusive_group()
    where.add_argument(
        "--user",
        dest="location",
        action="store_const",
        const="user",
        help=f"write the user's config directory ({paths.jupyter_config_dir()})",
    )
    where.add_argument(
        "--sys-prefix",
        dest="location",
        action="store_const",
        const="sys-prefix",
        help=f"write this environment's config directory ({paths.ENV_CONFIG_PATH[0]}); default",
    )
    where.add_argument(
        "--system",
        dest="location",
        action="store_const",
        const="system",
        help=f"write the system-wide config directory ({paths.SYSTEM_CONFIG_PATH[0]})",
    )
    kill.set_defaults(location="sys-prefix")
    return parser


class _DescriptionFormatter(argparse.HelpFormatter):
    """Keeps the epilog's example lines as written and never splits a path in the help."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        text = " ".join(text.split())
        return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``jupyter copilot``; returns the exit code (2 for a bad argument)."""
    args = build_parser().parse_args(argv)
    try:
        if args.action == "status":
            status(args.location)
        else:
            switch(args.location, engage=args.action == "on")
    except CommandError as e:
        print(f"jupyter copilot: error: {e}", file=sys.stderr)
        return 1
    return 0


def _flag_for(directory: str) -> str:
    for location in ("user", "sys-prefix", "system"):
        if _same(directory, target_directory(location)):
            return f"--{location}"
    return ""


def _same(a: str, b: str) -> bool:
    return os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b))


def _reason(error: BaseException) -> str:
    return getattr(error, "strerror", None) or type(error).__name__


if __name__ == "__main__":
    sys.exit(main())
