"""``jupyter copilot kill-switch``, run as a real command against temporary config directories.

Each test gets its own virtual environment (so ``--sys-prefix``, the default, is a temporary
directory), ``JUPYTER_CONFIG_DIR`` for ``--user`` and, through ``JUPYTER_PLATFORM_DIRS`` and
``XDG_CONFIG_DIRS``, a temporary ``--system`` directory: nothing outside the test's tmp dir
is read or written.
"""

from __future__ import annotations

import json
import logging
import os
import site
import stat
import subprocess
import sys
import venv
from dataclasses import dataclass
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, from PyPI (the test extras)
    import tomli as tomllib

from jupyter_copilot.admin.cli import updated_config
from jupyter_copilot.admin.killswitch import KillSwitch, KillSwitchState

REPO = Path(__file__).resolve().parent.parent
NAME = "jupyter_copilot_config.json"

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="the temporary --system directory relies on XDG_CONFIG_DIRS"
)


@dataclass
class Env:
    """A temporary Jupyter environment and a way to run the command in it."""

    root: Path
    python: Path
    user: Path
    sys_prefix: Path
    system: Path
    environ: dict[str, str]

    def run(self, *args: str, command: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
        argv = list(command) or [str(self.python), "-m", "jupyter_copilot.admin.cli"]
        return subprocess.run(
            [*argv, *args],
            env=self.environ,
            cwd=self.root,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def config(self, directory: Path, name: str = NAME) -> dict[str, object]:
        return json.loads((directory / name).read_text(encoding="utf-8"))


@pytest.fixture
def env(tmp_path: Path) -> Env:
    """A fresh environment whose three config directories live under ``tmp_path``."""
    prefix = tmp_path / "venv"
    venv.create(prefix, system_site_packages=False, with_pip=False)
    # The new environment imports what the interpreter running the tests imports (jupyter_core,
    # ...), whether that is a virtualenv or a system Python: a .pth file in its own
    # site-packages, as its own interpreter reports it, adds the running one's site directories.
    python = prefix / "bin" / "python"
    nested = subprocess.run(
        [str(python), "-I", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(nested).mkdir(parents=True, exist_ok=True)
    outer = [*site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        outer.append(site.getusersitepackages())
    (Path(nested) / "outer-environment.pth").write_text(
        "".join(f"import site; site.addsitedir({p!r})\n" for p in outer if Path(p).is_dir()),
        encoding="utf-8",
    )
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "XDG"))}
    environ.update(
        {
            "PYTHONPATH": str(REPO),
            "PYTHONNOUSERSITE": "1",
            "HOME": str(tmp_path / "home"),
            "JUPYTER_CONFIG_DIR": str(tmp_path / "user"),
            "JUPYTER_PLATFORM_DIRS": "1",
            "XDG_CONFIG_DIRS": str(tmp_path / "xdg"),
            "JUPYTER_PREFER_ENV_PATH": "0",
        }
    )
    return Env(
        root=tmp_path,
        python=python,
        user=tmp_path / "user",
        sys_prefix=prefix / "etc" / "jupyter",
        system=tmp_path / "xdg" / "jupyter",
        environ=environ,
    )


def place(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def written_files(env: Env) -> list[Path]:
    return sorted(p for p in env.root.rglob("*") if p.is_file() and "venv/bin" not in str(p))


# -- the file content, directly ----------------------------------------------------------------


def test_updated_config_sets_the_switch_and_keeps_everything_else() -> None:
    existing = json.dumps({"ServerApp": {"port": 9}, "CopilotApp": {"tools_enabled": True, "x": 1}})
    assert updated_config(existing, False) == {
        "ServerApp": {"port": 9},
        "CopilotApp": {"tools_enabled": False, "x": 1},
    }
    assert updated_config(None, True) == {"CopilotApp": {"tools_enabled": True}}
    assert updated_config("  \n", False) == {"CopilotApp": {"tools_enabled": False}}


@pytest.mark.parametrize(
    "text",
    ["{", "[]", '"x"', '{"CopilotApp": 3}', pytest.param("[" * 100_000, id="deeply-nested")],
)
def test_updated_config_refuses_what_it_cannot_keep(text: str) -> None:
    with pytest.raises(ValueError):
        updated_config(text, False)


# -- on / off -----------------------------------------------------------------------------------


def test_on_writes_false_to_the_sys_prefix_directory_by_default(env: Env) -> None:
    result = env.run("kill-switch", "on")
    assert result.returncode == 0, result.stderr
    assert env.config(env.sys_prefix) == {"CopilotApp": {"tools_enabled": False}}
    assert "ENGAGED" in result.stdout and str(env.sys_prefix / NAME) in result.stdout
    assert not (env.user / NAME).exists() and not (env.system / NAME).exists()


@pytest.mark.parametrize("flag", ["--user", "--sys-prefix", "--system"])
def test_each_location_flag_writes_its_own_directory(env: Env, flag: str) -> None:
    target = {"--user": env.user, "--sys-prefix": env.sys_prefix, "--system": env.system}[flag]
    assert env.run("kill-switch", "on", flag).returncode == 0
    assert env.config(target) == {"CopilotApp": {"tools_enabled": False}}
    assert [p for p in written_files(env) if p.name == NAME] == [target / NAME]
    # No temporary file is left next to it.
    assert sorted(p.name for p in target.iterdir()) == [NAME]


def test_a_server_side_kill_switch_sees_what_on_and_off_wrote(env: Env) -> None:
    ks = KillSwitch(
        False, [str(env.user), str(env.sys_prefix), str(env.system)], logging.getLogger(__name__)
    )
    assert env.run("kill-switch", "on", "--system").returncode == 0
    assert ks.state() == KillSwitchState(True, "file")
    assert env.run("kill-switch", "off", "--system").returncode == 0
    assert ks.state() == KillSwitchState(False, None)


def test_off_keeps_other_keys_and_the_file_mode(env: Env) -> None:
    path = place(
        env.user,
        NAME,
        json.dumps({"ServerApp": {"port": 9}, "CopilotApp": {"enabled": False}}),
    )
    os.chmod(path, 0o640)
    result = env.run("kill-switch", "off", "--user")
    assert result.returncode == 0, result.stderr
    assert env.config(env.user) == {
        "ServerApp": {"port": 9},
        "CopilotApp": {"enabled": False, "tools_enabled": True},
    }
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    assert "No config file engages the kill switch" in result.stdout


def test_a_new_file_is_readable_like_any_file_the_user_creates(env: Env) -> None:
    assert env.run("kill-switch", "on", "--system").returncode == 0
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(env.system / NAME).st_mode) == 0o666 & ~umask


def test_off_says_the_switch_stays_engaged_by_another_file(env: Env) -> None:
    admin = place(
        env.system, "jupyter_server_config.json", '{"CopilotApp": {"tools_enabled": false}}'
    )
    result = env.run("kill-switch", "off", "--user")
    assert result.returncode == 0
    assert env.config(env.user) == {"CopilotApp": {"tools_enabled": True}}
    assert "stays ENGAGED" in result.stdout
    assert f"{admin}: ENGAGED (tools_enabled = false)" in result.stdout
    assert "No config file engages" not in result.stdout


def test_off_names_the_flag_that_lifts_an_on_elsewhere(env: Env) -> None:
    assert env.run("kill-switch", "on", "--system").returncode == 0
    result = env.run("kill-switch", "off", "--user")
    assert "stays ENGAGED" in result.stdout
    assert "jupyter copilot kill-switch off --system" in result.stdout


def test_off_says_a_python_config_file_keeps_new_servers_engaged(env: Env) -> None:
    py = place(env.sys_prefix, "jupyter_server_config.py", "c.CopilotApp.tools_enabled = False\n")
    result = env.run("kill-switch", "off")
    assert result.returncode == 0
    assert "until restarted" in result.stdout and str(py) in result.stdout
    assert "command line" in result.stdout


def test_an_invalid_existing_file_is_left_alone_with_exit_1(env: Env) -> None:
    path = place(env.user, NAME, '{"CopilotApp": ')
    result = env.run("kill-switch", "on", "--user")
    assert result.returncode == 1
    assert "not valid config" in result.stderr and "Traceback" not in result.stderr
    assert path.read_text(encoding="utf-8") == '{"CopilotApp": '


def test_an_unwritable_directory_is_an_error_not_a_traceback(env: Env) -> None:
    place(env.root, "xdg", "a file where the system directory should be")
    result = env.run("kill-switch", "on", "--system")
    assert result.returncode == 1
    assert "cannot write" in result.stderr and "Traceback" not in result.stderr


# -- status -------------------------------------------------------------------------------------


def test_status_lists_every_directory_and_what_each_file_says(env: Env) -> None:
    place(env.user, NAME, '{"CopilotApp": {"tools_enabled": true}}')
    place(env.user, "jupyter_server_config.json", '{"ServerApp": {}}')
    place(env.sys_prefix, "jupyter_server_config.json", "{ not json")
    place(env.system, NAME, '{"CopilotApp": {"tools_enabled": false}}')
    result = env.run("kill-switch", "status", "--user")
    assert result.returncode == 0, result.stderr
    lines = [line.split() for line in result.stdout.splitlines()]
    assert [str(env.user), "<-", "on/off", "with", "these", "options", "write", "here"] in lines
    assert [str(env.sys_prefix)] in lines and [str(env.system)] in lines
    out = result.stdout
    user_block = out.split(str(env.user), 1)[1].split(str(env.sys_prefix), 1)[0]
    assert "jupyter_copilot_config.json    enabled (tools_enabled = true)" in user_block
    assert "jupyter_server_config.json     says nothing about tools_enabled" in user_block
    env_block = out.split(str(env.sys_prefix), 1)[1].split(str(env.system), 1)[0]
    assert "jupyter_copilot_config.json    not present" in env_block
    assert "jupyter_server_config.json     INVALID (counts as engaged)" in env_block
    system_block = out.split(str(env.system), 1)[1]
    assert "jupyter_copilot_config.json    ENGAGED (tools_enabled = false)" in system_block
    assert "Verdict from these files: ENGAGED by a live config file." in out
    assert "command line" in out


def test_status_with_no_config_is_not_engaged_and_writes_nothing(env: Env) -> None:
    result = env.run("kill-switch", "status")
    assert result.returncode == 0
    assert "Verdict from these files: not engaged." in result.stdout
    assert "A running server can also be engaged by its command line" in result.stdout
    assert not any(p.name.endswith(".json") for p in written_files(env))


def test_status_reports_start_time_python_config(env: Env) -> None:
    py = place(env.system, "jupyter_copilot_config.py", "c.CopilotApp.tools_enabled = False\n")
    result = env.run("kill-switch", "status")
    assert f"{py}: ENGAGED (tools_enabled = false)" in result.stdout
    assert "ENGAGED for servers started with the files above" in result.stdout


# -- arguments, help and the jupyter command ------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["kill-switch"],
        ["kill-switch", "bogus"],
        ["kill-switch", "on", "--user", "--system"],
        ["kill-switch", "on", "--bogus"],
        ["nope"],
    ],
)
def test_a_bad_argument_exits_2_with_a_message(env: Env, args: list[str]) -> None:
    result = env.run(*args)
    assert result.returncode == 2
    assert "error:" in result.stderr and "usage: jupyter copilot" in result.stderr
    assert "Traceback" not in result.stderr
    assert not any(p.name.endswith(".json") for p in written_files(env))


def test_help_explains_the_commands_and_the_directories(env: Env) -> None:
    top = env.run("--help")
    assert top.returncode == 0 and "kill-switch" in top.stdout
    help_text = env.run("kill-switch", "--help")
    assert help_text.returncode == 0
    flat = " ".join(help_text.stdout.split())
    for expected in ("{on,off,status}", "--user", "--sys-prefix", "--system", "2 seconds"):
        assert expected in flat
    for directory in (env.user, env.sys_prefix, env.system):
        assert str(directory) in flat


def test_jupyter_copilot_is_found_by_the_jupyter_command(env: Env) -> None:
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    entry = scripts["project"]["scripts"]["jupyter-copilot"]
    module, function = entry.split(":")
    bin_dir = env.root / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "jupyter-copilot"  # what pip generates for the console script
    shim.write_text(
        f"#!{env.python}\nimport sys\nfrom {module} import {function}\nsys.exit({function}())\n",
        encoding="utf-8",
    )
    shim.chmod(0o755)
    env.environ["PATH"] = f"{bin_dir}{os.pathsep}{env.environ.get('PATH', '')}"
    result = env.run("copilot", "kill-switch", "on", command=(str(env.python), "-m", "jupyter"))
    assert result.returncode == 0, result.stderr
    assert env.config(env.sys_prefix) == {"CopilotApp": {"tools_enabled": False}}
