"""The kill switch: the pure rules, live JSON files on disk, polling, and a real server's config."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from traitlets.config.loader import DeferredConfigString

from jupyter_copilot.admin.killswitch import (
    FileReading,
    KillSwitch,
    KillSwitchState,
    combine,
    config_directories,
    config_engaged,
    config_reading,
    decide_config_engaged,
    file_reading,
    file_verdict,
    read_json_file,
)
from tests.eventually import eventually

LOGGER = "jupyter_copilot.test_killswitch"
ENGAGED_TEXT = '{"CopilotApp": {"tools_enabled": false}}'
ENABLED_TEXT = '{"CopilotApp": {"tools_enabled": true }}'  # same length as ENGAGED_TEXT
DISENGAGED = KillSwitchState(False, None)
BY_FILE = KillSwitchState(True, "file")
BY_CONFIG = KillSwitchState(True, "config")


def write(path: Path, text: str | bytes) -> Path:
    """Write like an editor does: in place, no temporary file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def switch(*directories: Path, config: bool = False) -> KillSwitch:
    return KillSwitch(config, [str(d) for d in directories], logging.getLogger(LOGGER))


# -- pure functions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        (None, None),
        ("{}", None),
        ('{"ServerApp": {"port": 1}}', None),
        ('{"CopilotApp": {"enabled": false}}', None),
        ('{"CopilotApp": {"tools_enabled": true}}', True),
        ('{"CopilotApp": {"tools_enabled": false}}', False),
        ("", False),
        ("   \n", False),
        ('{"CopilotApp": {"tools_enabled": false}', False),
        ('{"CopilotApp": {"tools_enabled": "false"}}', False),
        ('{"CopilotApp": {"tools_enabled": "true"}}', False),
        ('{"CopilotApp": {"tools_enabled": 1}}', False),
        ('{"CopilotApp": {"tools_enabled": null}}', False),
        ('{"CopilotApp": true}', False),
        ("[]", False),
        ("true", False),
        pytest.param("[" * 100_000, False, id="deeply-nested"),
    ],
)
def test_file_verdict_reads_tools_enabled_and_fails_closed(text: str | None, verdict: Any) -> None:
    assert file_verdict(text) is verdict


def test_file_reading_tells_unparseable_from_explicitly_engaged() -> None:
    assert file_reading(None) is FileReading.ABSENT
    assert file_reading("{}") is FileReading.SILENT
    assert file_reading(ENGAGED_TEXT) is FileReading.ENGAGED
    assert file_reading(ENABLED_TEXT) is FileReading.ENABLED
    assert file_reading("{") is FileReading.INVALID
    assert FileReading.UNREADABLE.verdict is False


@pytest.mark.parametrize(
    ("raw", "reading"),
    [("False", FileReading.ENGAGED), ("0", FileReading.ENGAGED), ("true", FileReading.ENABLED)],
)
def test_command_line_strings_are_parsed_like_traitlets(raw: str, reading: FileReading) -> None:
    config = {"CopilotApp": {"tools_enabled": DeferredConfigString(raw)}}
    assert config_reading(config) is reading
    bad = {"CopilotApp": {"tools_enabled": DeferredConfigString("nope")}}
    assert config_reading(bad) is FileReading.INVALID


def test_combine_gives_config_precedence_over_files() -> None:
    assert combine(True, [False, True]) == BY_CONFIG
    assert combine(True, []) == BY_CONFIG
    assert combine(False, [None, True, False]) == BY_FILE
    assert combine(False, [None, True, True]) == DISENGAGED
    assert combine(False, []) == DISENGAGED
    assert BY_FILE.to_json() == {"engaged": True, "source": "file"}
    assert DISENGAGED.to_json() == {"engaged": False, "source": None}


def test_config_source_rule_separates_the_config_object_from_json_files() -> None:
    # A Python file or the command line saying False always engages (a).
    assert decide_config_engaged(True, [None, False], json_said_false_at_startup=True)
    # Merged False with no JSON saying so: it came from elsewhere (the config object).
    assert decide_config_engaged(False, [None], json_said_false_at_startup=False)
    # Merged False explained by a JSON file alone: (a) is not engaged.
    assert not decide_config_engaged(False, [None, True], json_said_false_at_startup=True)
    assert not decide_config_engaged(True, [], json_said_false_at_startup=False)


# -- live files --------------------------------------------------------------------------------


def test_writing_false_engages_and_writing_true_disengages(tmp_path: Path) -> None:
    ks = switch(tmp_path / "user", tmp_path / "env")
    assert ks.state() == DISENGAGED
    target = write(tmp_path / "env" / "jupyter_server_config.json", ENGAGED_TEXT)
    assert ks.state() == BY_FILE
    write(target, json.dumps({"CopilotApp": {"tools_enabled": True}, "ServerApp": {}}))
    assert ks.state() == DISENGAGED


def test_a_user_file_saying_true_cannot_lift_a_system_file(tmp_path: Path) -> None:
    ks = switch(tmp_path / "user", tmp_path / "system")
    write(tmp_path / "user" / "jupyter_copilot_config.json", ENABLED_TEXT)
    write(tmp_path / "system" / "jupyter_copilot_config.json", ENGAGED_TEXT)
    assert ks.state() == BY_FILE


def test_a_deleted_file_stops_counting(tmp_path: Path) -> None:
    ks = switch(tmp_path)
    target = write(tmp_path / "jupyter_copilot_config.json", ENGAGED_TEXT)
    assert ks.state() == BY_FILE
    target.unlink()
    assert ks.state() == DISENGAGED


def test_anything_but_a_regular_file_at_a_config_path_engages_without_blocking(
    tmp_path: Path,
) -> None:
    # A FIFO with no writer would block a plain open() forever; a folder, a symlink to
    # nothing and a huge file are no config either. Each engages (fail closed).
    cases: dict[str, Callable[[Path], None]] = {
        "fifo": lambda p: os.mkfifo(p),
        "folder": lambda p: p.mkdir(),
        "dangling": lambda p: p.symlink_to(tmp_path / "nowhere.json"),
        "huge": lambda p: write(p, '{"CopilotApp": {"tools_enabled": true}}' + " " * (2 << 20)),
    }
    for name, make in cases.items():
        directory = tmp_path / name
        directory.mkdir()
        make(directory / "jupyter_copilot_config.json")
        ks = switch(directory)
        started = time.monotonic()
        assert ks.state() == BY_FILE, name
        assert read_json_file(str(directory / "jupyter_copilot_config.json")) is (
            FileReading.UNREADABLE
        ), name
        assert time.monotonic() - started < 1.0, name


def test_a_file_with_a_future_modification_time_is_not_read_on_every_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = write(tmp_path / "jupyter_copilot_config.json", ENABLED_TEXT)
    future = time.time_ns() + 3600 * 10**9
    os.utime(target, ns=(future, future))
    ks = switch(tmp_path)
    reads = []
    real = ks._reread
    monkeypatch.setattr(ks, "_reread", lambda *a: reads.append(1) or real(*a))
    for _ in range(50):
        assert ks.state() == DISENGAGED
    assert len(reads) == 1


def test_config_source_wins_even_when_files_also_engage(tmp_path: Path) -> None:
    ks = switch(tmp_path, config=True)
    assert ks.state() == BY_CONFIG
    write(tmp_path / "jupyter_copilot_config.json", ENGAGED_TEXT)
    assert ks.state() == BY_CONFIG
    write(tmp_path / "jupyter_copilot_config.json", ENABLED_TEXT)
    assert ks.state() == BY_CONFIG


def test_a_rewrite_with_identical_size_inode_and_mtime_is_not_missed(tmp_path: Path) -> None:
    ks = switch(tmp_path)
    target = write(tmp_path / "jupyter_copilot_config.json", ENGAGED_TEXT)
    before = os.stat(target)
    assert ks.state() == BY_FILE
    with open(target, "r+", encoding="utf-8") as f:  # in place: same inode
        f.write(ENABLED_TEXT)
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(target)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )
    assert ks.state() == DISENGAGED


def test_a_change_to_an_old_file_is_seen(tmp_path: Path) -> None:
    ks = switch(tmp_path)
    target = write(tmp_path / "jupyter_copilot_config.json", ENABLED_TEXT)
    an_hour_ago = time.time() - 3600
    os.utime(target, (an_hour_ago, an_hour_ago))
    assert ks.state() == DISENGAGED
    write(target, json.dumps({"CopilotApp": {"tools_enabled": False}}))
    os.utime(target, (an_hour_ago + 1, an_hour_ago + 1))
    assert ks.state() == BY_FILE


@pytest.mark.parametrize("kind", ["not-utf8", "directory", "not-a-bool"])
def test_an_unreadable_file_engages_and_warns_once_without_path_or_content(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    ks = switch(tmp_path)
    target = tmp_path / "jupyter_copilot_config.json"
    if kind == "not-utf8":
        write(target, b'\xff{"secret-marker": "x = 1"}')
    elif kind == "directory":
        target.mkdir()
    else:
        write(target, '{"CopilotApp": {"tools_enabled": "secret-marker"}}')
    for _ in range(3):
        assert ks.state() == BY_FILE
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert "jupyter_copilot_config.json" in message
    assert str(tmp_path) not in message and "secret-marker" not in message
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert any(str(target) in m for m in debug)
    assert not any("secret-marker" in m for m in debug)


def test_an_unusable_file_warns_again_after_it_changes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    ks = switch(tmp_path)
    target = write(tmp_path / "jupyter_server_config.json", "{")
    assert ks.state() == BY_FILE
    write(target, "{ also broken")
    assert ks.state() == BY_FILE
    assert len(caplog.records) == 2
    write(target, ENABLED_TEXT)
    assert ks.state() == DISENGAGED
    assert len(caplog.records) == 2


def test_directories_are_searched_once_each(tmp_path: Path) -> None:
    same = [str(tmp_path), f"{tmp_path}{os.sep}.{os.sep}", "", str(tmp_path)]
    ks = KillSwitch(False, same, logging.getLogger(LOGGER))
    assert ks.directories == [str(tmp_path)]
    write(tmp_path / "jupyter_copilot_config.json", ENGAGED_TEXT)
    assert ks.state() == BY_FILE


# -- polling -----------------------------------------------------------------------------------


async def until(condition: Callable[[], bool], timeout: float = 3.0) -> float:
    """Wait for a condition on the running loop; returns the seconds it took."""
    start = time.monotonic()
    await eventually(condition, "the switch to report the change", timeout, interval=0.01)
    return time.monotonic() - start


async def test_start_reports_each_change_once_and_stop_ends_it(
    tmp_path: Path, jp_asyncio_loop: Any
) -> None:
    ks = switch(tmp_path)
    changes: list[KillSwitchState] = []
    ks.start(changes.append, interval_seconds=0.02)
    try:
        # The fixed waits below are the point: five polls (0.02 s apart) report nothing more.
        await asyncio.sleep(0.1)
        assert changes == []
        target = write(tmp_path / "jupyter_copilot_config.json", ENGAGED_TEXT)
        assert ks.state() == BY_FILE  # a direct call does not swallow the notification
        await until(lambda: len(changes) == 1)
        write(target, ENABLED_TEXT)
        await until(lambda: len(changes) == 2)
        await asyncio.sleep(0.1)
        assert changes == [BY_FILE, DISENGAGED]
    finally:
        ks.stop()
    write(tmp_path / "jupyter_copilot_config.json", ENGAGED_TEXT)
    await asyncio.sleep(0.1)  # once stopped, five polls' time brings no report
    assert changes == [BY_FILE, DISENGAGED]


async def test_a_change_takes_effect_within_two_seconds_by_default(
    tmp_path: Path, jp_asyncio_loop: Any
) -> None:
    ks = switch(tmp_path)
    changes: list[KillSwitchState] = []
    ks.start(changes.append)
    try:
        write(tmp_path / "jupyter_server_config.json", ENGAGED_TEXT)
        assert await until(lambda: changes == [BY_FILE], timeout=2.0) < 2.0
    finally:
        ks.stop()


async def test_a_failing_handler_does_not_stop_polling(
    tmp_path: Path, jp_asyncio_loop: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger=LOGGER)
    ks = switch(tmp_path)
    seen: list[KillSwitchState] = []

    def handler(state: KillSwitchState) -> None:
        seen.append(state)
        raise RuntimeError("boom")

    ks.start(handler, interval_seconds=0.02)
    try:
        target = write(tmp_path / "jupyter_copilot_config.json", ENGAGED_TEXT)
        await until(lambda: len(seen) == 1)
        write(target, ENABLED_TEXT)
        await until(lambda: len(seen) == 2)
    finally:
        ks.stop()
    assert len(caplog.records) == 2


# -- a real server's configuration -------------------------------------------------------------

PY_FALSE = "c.CopilotApp.tools_enabled = False\n"


@pytest.fixture
def config_files() -> dict[str, str]:
    """Config files to write before the server starts: ``{"<user|env|system>/<name>": text}``."""
    return {}


@pytest.fixture
def jp_server_config(
    jp_server_config: Any,
    config_files: dict[str, str],
    jp_config_dir: Path,
    jp_env_config_path: Path,
    jp_system_config_path: Path,
) -> Any:
    """The shared server config, with `config_files` written into the test's config path."""
    places = {"user": jp_config_dir, "env": jp_env_config_path, "system": jp_system_config_path}
    for key, text in config_files.items():
        place, name = key.split("/")
        write(places[place] / name, text)
    return jp_server_config


def live_switch(copilot: Any) -> KillSwitch:
    return KillSwitch(config_engaged(copilot), config_directories(copilot), copilot.log)


def test_config_directories_are_the_test_config_path(
    copilot: Any, jp_config_dir: Path, jp_env_config_path: Path, jp_system_config_path: Path
) -> None:
    directories = config_directories(copilot)
    for expected in (jp_config_dir, jp_env_config_path, jp_system_config_path):
        assert str(expected) in directories
    assert len(directories) == len(set(directories))


def test_a_server_with_no_kill_switch_config_is_disengaged_until_a_file_says_so(
    copilot: Any, jp_env_config_path: Path
) -> None:
    ks = live_switch(copilot)
    assert ks.state() == DISENGAGED
    write(jp_env_config_path / "jupyter_server_config.json", ENGAGED_TEXT)
    assert ks.state() == BY_FILE


# Each case also has a live JSON file saying False, so that the merged trait cannot be what
# makes it "config": the file named first must be read as a source of its own.
LIVE_FALSE = {"user/jupyter_server_config.json": ENGAGED_TEXT}


@pytest.mark.parametrize(
    "config_files",
    [
        {"user/jupyter_copilot_config.py": PY_FALSE, **LIVE_FALSE},
        {"env/jupyter_server_config.py": PY_FALSE, **LIVE_FALSE},
        {"system/jupyter_config.py": PY_FALSE, **LIVE_FALSE},
        {"system/jupyter_config.json": ENGAGED_TEXT, **LIVE_FALSE},
    ],
)
def test_a_python_or_other_config_file_saying_false_is_config(copilot: Any) -> None:
    assert config_engaged(copilot)
    assert live_switch(copilot).state() == BY_CONFIG


@pytest.mark.parametrize(
    "config_files",
    [
        {
            "system/jupyter_copilot_config.py": PY_FALSE,
            "user/jupyter_copilot_config.json": ENABLED_TEXT,
        }
    ],
)
def test_a_python_file_engages_even_when_a_json_file_outvotes_it_in_the_merge(
    copilot: Any,
) -> None:
    assert copilot.tools_enabled is True
    assert config_engaged(copilot)


@pytest.mark.parametrize("config_files", [{"user/jupyter_copilot_config.json": ENGAGED_TEXT}])
def test_a_json_file_alone_is_file_and_lifting_it_disengages(
    copilot: Any, jp_config_dir: Path
) -> None:
    assert copilot.tools_enabled is False  # the merged trait cannot tell the sources apart
    assert not config_engaged(copilot)
    ks = live_switch(copilot)
    assert ks.state() == BY_FILE
    write(jp_config_dir / "jupyter_copilot_config.json", ENABLED_TEXT)
    assert ks.state() == DISENGAGED


@pytest.mark.parametrize(
    "config_files",
    [
        {
            "user/jupyter_copilot_config.json": ENGAGED_TEXT,
            "env/jupyter_copilot_config.py": PY_FALSE,
        }
    ],
)
def test_a_json_file_and_a_python_file_both_saying_false_is_config(copilot: Any) -> None:
    assert config_engaged(copilot)


@pytest.mark.parametrize("copilot_config", [{"tools_enabled": False}])
def test_the_config_object_saying_false_is_config(copilot: Any) -> None:
    assert config_engaged(copilot)
    assert live_switch(copilot).state() == BY_CONFIG


@pytest.mark.parametrize("config_files", [LIVE_FALSE])
@pytest.mark.parametrize("jp_argv", [["--CopilotApp.tools_enabled=False"]])
def test_the_command_line_saying_false_is_config(copilot: Any) -> None:
    assert config_engaged(copilot)


@pytest.mark.parametrize(
    "config_files",
    [{"env/jupyter_server_config.py": "c.CopilotApp.enabled = True\n", **LIVE_FALSE}],
)
def test_a_python_file_that_says_nothing_does_not_engage(copilot: Any) -> None:
    assert not config_engaged(copilot)
