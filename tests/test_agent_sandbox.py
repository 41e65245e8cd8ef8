"""The agent sandbox (agents/sandbox.py, seccomp.py, egress.py; docs/security.md, "The sandbox").

Its command lines and network plans are checked directly; the start-up probe is run for
real with bubblewrap, also as an ordinary user and against a weakened sandbox, which it must
catch. Hostile agent processes started by a real server are in tests/test_sandbox_escapes.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import jupyter_core
import platformdirs
import pytest

import jupyter_copilot
from jupyter_copilot.agents import seccomp
from jupyter_copilot.agents.catalog import KNOWN_AGENTS, build_catalog
from jupyter_copilot.agents.egress import NO_PROXY, parse_host, plan
from jupyter_copilot.agents.sandbox import (
    AGENT_HOME,
    AUTO,
    CHECKS,
    NET_DIR,
    OFF,
    REQUIRED,
    Launch,
    Layout,
    Sandbox,
    SandboxRequired,
    copy_settings,
    rehomed,
    runtime_folders,
    self_test,
    wrap,
)

BWRAP = shutil.which("bwrap")
needs_bwrap = pytest.mark.skipif(BWRAP is None, reason="bubblewrap is not installed here")


def mounts(argv: list[str]) -> str:
    """The argv before the command, as one string."""
    return " ".join(argv[: argv.index("--")])


# -- the layout -----------------------------------------------------------------------------


def test_the_whole_machine_is_read_only_and_every_namespace_and_capability_is_gone() -> None:
    argv = wrap("bwrap", ["agent", "--acp"], Layout(root="/srv/root", cwd="/srv/root"))
    text = mounts(argv)
    assert argv[:4] == ["bwrap", "--ro-bind", "/", "/"]
    assert "--bind / /" not in text
    for flag in ("--unshare-all", "--unshare-user", "--disable-userns", "--new-session"):
        assert flag in argv
    assert "--cap-drop ALL" in text and "--die-with-parent" in text
    assert "--share-net" not in text
    for place in ("/tmp", "/var/tmp", "/run"):
        assert f"--tmpfs {place}" in text
    assert argv[-3:] == ["--", "agent", "--acp"]


def test_a_root_under_home_is_brought_back_read_only_over_the_hidden_home() -> None:
    layout = Layout(root="/home/ann/project", home="/home/ann", agent_home="/data/agent")
    text = mounts(wrap("bwrap", ["agent"], layout))
    hidden = text.index("--tmpfs /home/ann ")
    assert text.index("--ro-bind /home/ann/project /home/ann/project", hidden) > hidden
    assert "--remount-ro /home/ann" in text
    assert f"--bind /data/agent {AGENT_HOME}" in text


def test_a_root_that_is_home_shows_its_files_but_never_its_dotfiles() -> None:
    layout = Layout(
        root="/home/ann",
        home="/home/ann",
        secret_dirs=("/home/ann/.ssh", "/home/ann/.claude"),
        secret_files=("/home/ann/.bashrc",),
    )
    text = mounts(wrap("bwrap", ["agent"], layout))
    assert "--tmpfs /home/ann " not in text
    assert "--ro-bind /home/ann /home/ann" in text
    assert "--tmpfs /home/ann/.ssh --remount-ro /home/ann/.ssh" in text
    assert "--tmpfs /home/ann/.claude" in text
    assert "--ro-bind /dev/null /home/ann/.bashrc" in text


def test_secrets_under_a_hidden_place_or_another_secret_are_not_mounted_again() -> None:
    layout = Layout(
        root="/srv/root",
        home="/home/ann",
        secret_dirs=("/srv/jupyter", "/home/ann/.local/share/jupyter"),
        secret_files=("/srv/jupyter/copilot/conversations.db",),
    )
    text = mounts(wrap("bwrap", ["agent"], layout))
    assert "--tmpfs /srv/jupyter --remount-ro /srv/jupyter" in text
    assert "conversations.db" not in text
    assert "/home/ann/.local/share/jupyter" not in text


def test_the_program_folders_come_back_where_hidden_and_their_secrets_stay_hidden() -> None:
    layout = Layout(
        root="/home/ann/project",
        home="/home/ann",
        shown=("/home/ann/.venv", "/usr"),
        secret_dirs=("/home/ann/.venv/share/jupyter",),
    )
    text = mounts(wrap("bwrap", ["agent"], layout))
    shown = text.index("--ro-bind /home/ann/.venv /home/ann/.venv")
    assert text.index("--tmpfs /home/ann/.venv/share/jupyter", shown) > shown
    # /usr is not hidden: it is not bound again.
    assert "--ro-bind /usr /usr" not in text


def test_a_hidden_root_is_an_empty_read_only_folder() -> None:
    layout = Layout(root="/srv/root", hide_root=True, notebooks=("/srv/root/a.ipynb",))
    text = mounts(wrap("bwrap", ["agent"], layout))
    assert "--tmpfs /srv/root" in text and "--remount-ro /srv/root" in text
    assert "--ro-bind /srv/root /srv/root" not in text and "/dev/null" not in text


def test_with_the_root_shown_every_notebook_and_settings_folder_in_it_is_hidden(
    tmp_path: Path,
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.ipynb").write_text("{}")
    (tmp_path / "sub" / "B.IPYNB").write_text("{}")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / ".gemini").mkdir()
    sandbox = Sandbox(AUTO, "bwrap", str(tmp_path))
    text = mounts(wrap("bwrap", ["agent"], sandbox.layout(["agent"])))
    for notebook in (tmp_path / "a.ipynb", tmp_path / "sub" / "B.IPYNB"):
        assert f"--ro-bind /dev/null {notebook}" in text
    assert f"--tmpfs {tmp_path / '.gemini'}" in text
    assert "notes.txt" not in text


def test_too_many_notebooks_hide_the_whole_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("jupyter_copilot.agents.sandbox.MAX_HIDDEN_NOTEBOOKS", 3)
    for i in range(5):
        (tmp_path / f"n{i}.ipynb").write_text("{}")
    layout = Sandbox(AUTO, "bwrap", str(tmp_path)).layout(["agent"])
    assert layout.hide_root and not layout.notebooks


def test_an_agent_installed_in_node_modules_is_shown_whole_with_its_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "node_modules" / "@scope" / "agent" / "dist"
    package.mkdir(parents=True)
    script = package / "index.js"
    script.write_text("#!/usr/bin/env python3\n")
    script.chmod(0o755)
    bin_dir = tmp_path / "node_modules" / ".bin"
    bin_dir.mkdir()
    (bin_dir / "agent").symlink_to(script)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    folders = runtime_folders(["agent"], path)
    assert str(tmp_path / "node_modules") in folders
    assert os.path.realpath(sys.prefix) in folders
    python3 = shutil.which("python3")
    assert python3 is not None
    assert os.path.dirname(os.path.dirname(os.path.realpath(python3))) in folders


def test_home_or_a_folder_holding_it_is_never_shown_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    agent = home / "bin" / "agent"
    agent.write_text("#!/bin/sh\n")
    agent.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    layout = Sandbox(AUTO, "bwrap", str(tmp_path / "root")).layout(
        ["agent"], path=f"{home / 'bin'}{os.pathsep}{os.environ['PATH']}"
    )
    assert str(home) not in layout.shown
    assert str(home / "bin") in layout.shown


def test_a_required_sandbox_that_does_not_work_starts_no_agent(tmp_path: Path) -> None:
    sandbox = Sandbox(REQUIRED, None, str(tmp_path))
    assert not sandbox.active and "no agent can start" in sandbox.text
    with pytest.raises(SandboxRequired):
        sandbox.launch(["agent"], agent_id="x")


def test_with_the_sandbox_off_the_command_runs_as_it_is(tmp_path: Path) -> None:
    sandbox = Sandbox.detect(OFF, str(tmp_path))
    assert not sandbox.active and sandbox.launch(["agent"], agent_id="x").argv == ["agent"]


# -- the seccomp filter ---------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_the_filter_is_a_whole_program_that_refuses_the_escape_calls(arch: str) -> None:
    program = seccomp.program(arch)
    assert len(program) % 8 == 0
    denied = seccomp.denied_calls(arch)
    for name in ("mount", "umount2", "ptrace", "keyctl", "unshare", "setns", "bpf"):
        assert name in denied
    # One test per refused number, the checks of the ABI, the allow and the refusal.
    assert len(program) // 8 == len(set(denied.values())) + 4 + (arch == "x86_64") + 2


# -- the network plan -----------------------------------------------------------------------


def test_a_loopback_model_url_keeps_its_port_on_the_agents_loopback() -> None:
    the_plan = plan({"ANTHROPIC_BASE_URL": "http://127.0.0.1:5123/v1"}, [], mcp=True)
    tcp = [f for f in the_plan.forwards if f.kind == "tcp"]
    assert [(f.port, f.target) for f in tcp] == [(5123, ("127.0.0.1", 5123))]
    assert "ANTHROPIC_BASE_URL" not in the_plan.env
    assert the_plan.mcp_port is not None and the_plan.mcp_port != 5123
    # Nothing to proxy: no proxy variables, and loopback never goes through one.
    assert "HTTPS_PROXY" not in the_plan.env and the_plan.env["NO_PROXY"] == NO_PROXY


def test_https_hosts_go_through_the_proxy_and_a_plain_http_host_is_forwarded_alone() -> None:
    env = {
        "GOOGLE_GEMINI_BASE_URL": "https://llm.example.org:8443/",
        "OPENAI_BASE_URL": "http://llm.internal:8000/v1",
        "NOT_A_URL": "hello",
    }
    the_plan = plan(env, ["api.anthropic.com", "bad/host", "[::1]:99"], mcp=False)
    assert ("llm.example.org", 8443) in the_plan.hosts
    assert ("api.anthropic.com", 443) in the_plan.hosts and ("::1", 99) in the_plan.hosts
    assert len(the_plan.hosts) == 3
    proxy = next(f for f in the_plan.forwards if f.kind == "connect")
    assert (
        the_plan.env["HTTPS_PROXY"]
        == the_plan.env["http_proxy"]
        == (f"http://127.0.0.1:{proxy.port}")
    )
    forward = next(f for f in the_plan.forwards if f.target == ("llm.internal", 8000))
    assert the_plan.env["OPENAI_BASE_URL"] == f"http://127.0.0.1:{forward.port}/v1"
    assert the_plan.mcp_port is None


@pytest.mark.parametrize(
    ("spec", "pair"),
    [
        ("api.anthropic.com", ("api.anthropic.com", 443)),
        ("Host:8080", ("host", 8080)),
        ("[::1]:8443", ("::1", 8443)),
        ("user@host", None),
        ("host:0", None),
        ("host:x", None),
        ("a/b", None),
        ("", None),
    ],
)
def test_allowed_hosts_are_parsed_strictly(spec: str, pair: tuple[str, int] | None) -> None:
    assert parse_host(spec) == pair


# -- the catalog ----------------------------------------------------------------------------


def test_without_a_working_sandbox_agents_that_read_unasked_are_offered_only_when_allowed() -> None:
    on_path = {"claude-agent-acp", "gemini"}

    def which(command: str) -> str | None:
        return command if command in on_path else None

    sandboxed = [a.id for a in build_catalog({}, True, which, print, sandboxed=True)]
    assert {"claude-code", "gemini"} <= set(sandboxed)
    bare = build_catalog({}, True, which, print, sandboxed=False)
    assert "claude-code" not in [a.id for a in bare] and "gemini" not in [a.id for a in bare]
    allowed = build_catalog({}, True, which, print, True, sandboxed=False)
    claude = next(a for a in allowed if a.id == "claude-code")
    assert not claude.guarded and claude.to_json()["warning"]
    assert all(profile.credentials for profile, _ in KNOWN_AGENTS if profile.id != "goose")


# -- the start-up probe, for real -----------------------------------------------------------


@needs_bwrap
def test_the_probe_proves_every_property_here(tmp_path: Path) -> None:
    sandbox = Sandbox.detect(AUTO, str(tmp_path))
    assert sandbox.reason is None, sandbox.reason
    assert sandbox.active and set(sandbox.checks) == set(CHECKS)
    assert all(sandbox.checks.values())
    assert [c["name"] for c in sandbox.to_json()["checks"]] == list(CHECKS)  # type: ignore[index]


def run_launch(launch: Launch) -> subprocess.CompletedProcess[str]:
    """Start a sandbox launch and wait for it."""
    try:
        return subprocess.run(
            launch.argv,
            pass_fds=launch.pass_fds,
            env={**os.environ, **launch.env},
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    finally:
        launch.started()


def weakened(*dropped: str) -> Any:
    """A ``subprocess.run`` that starts bubblewrap without some of the sandbox's options:
    ``--flag`` drops it (with its value), ``--flag=value`` only that one."""
    with_value = ("--cap-drop", "--seccomp", "--tmpfs", "--remount-ro")

    def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
        command = argv.index("--")
        options, rest = argv[:command], argv[command:]
        kept: list[str] = []
        i = 0
        while i < len(options):
            word = options[i]
            value = options[i + 1] if word in with_value else None
            if word in dropped or f"{word}={value}" in dropped:
                i += 2 if value is not None else 1
                continue
            kept.append(word)
            i += 1
        if "--unshare-all" in dropped:
            kept += ["--unshare-user", "--unshare-pid"]
        return subprocess.run([*kept, *rest], **kwargs)

    return run


HOME = os.path.realpath(os.path.expanduser("~"))


@needs_bwrap
@pytest.mark.parametrize(
    ("dropped", "failed"),
    [
        (("--cap-drop",), {"capabilitiesDropped"}),
        (("--seccomp",), {"seccomp"}),
        (("--unshare-all",), {"networkIsolated"}),
        # The filter refuses unshare too: both must go for a new user namespace.
        (("--disable-userns", "--seccomp"), {"userNamespacesOff"}),
        ((f"--tmpfs={HOME}", f"--remount-ro={HOME}"), {"secretsHidden"}),
    ],
)
def test_the_probe_catches_a_sandbox_that_does_not_hold(
    tmp_path: Path, dropped: tuple[str, ...], failed: set[str]
) -> None:
    assert BWRAP is not None
    sandbox = Sandbox(AUTO, BWRAP, str(tmp_path))
    checks, reason = self_test(sandbox, run=weakened(*dropped))
    assert reason is None
    assert {name for name, ok in checks.items() if not ok} >= failed


@needs_bwrap
def test_a_root_sandbox_without_cap_drop_is_caught_writing_the_server_folder(
    tmp_path: Path,
) -> None:
    assert BWRAP is not None
    if os.geteuid() != 0:
        pytest.skip("only root keeps capabilities inside bubblewrap without --cap-drop")
    sandbox = Sandbox(AUTO, BWRAP, str(tmp_path))
    checks, _ = self_test(sandbox, run=weakened("--cap-drop", "--seccomp", "--disable-userns"))
    assert not checks["capabilitiesDropped"] and not checks["mountRefused"]


@needs_bwrap
def test_the_probe_also_proves_every_property_for_an_ordinary_user(
    request: pytest.FixtureRequest,
) -> None:
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or setpriv is None:
        pytest.skip("becoming another user needs root and setpriv")
    system_python = "/usr/bin/python3"
    if not os.access(system_python, os.X_OK):
        pytest.skip("no system Python for an ordinary user to run")
    # A folder the other user can enter: the test's own is for root only.
    tmp_path = Path(tempfile.mkdtemp(prefix="sandbox-user-", dir="/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(tmp_path, ignore_errors=True))
    home = tmp_path / "home"
    root = home / "project"
    root.mkdir(parents=True)
    # The code under test and what it imports, where the other user can read them (the
    # test's own Python may live in a folder only root can enter).
    lib = tmp_path / "lib"
    for module in (jupyter_copilot, jupyter_core, platformdirs):
        shutil.copytree(
            Path(module.__file__).parent,
            lib / Path(module.__file__).parent.name,
            ignore=shutil.ignore_patterns("__pycache__", "labextension", "skills_bundled"),
        )
    for folder in (tmp_path, home, root):
        os.chown(folder, 65534, 65534)
    for folder in (tmp_path, lib):
        folder.chmod(0o755)
    script = (
        "import json,sys;from jupyter_copilot.agents.sandbox import Sandbox;"
        "s=Sandbox.detect('auto',sys.argv[1]);print(json.dumps([s.reason,s.checks]))"
    )
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "PYTHONPATH": str(lib),
    }
    done = subprocess.run(
        [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", system_python, "-c"]
        + [script, str(root)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(root),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    reason, checks = json.loads(done.stdout)
    if reason is not None and "did not start" in reason:
        pytest.skip(f"user namespaces are not open to ordinary users here: {reason}")
    assert reason is None and all(checks.values()) and set(checks) == set(CHECKS), checks


@needs_bwrap
def test_the_agents_home_and_network_folders_are_where_the_environment_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    sandbox = Sandbox.detect(AUTO, str(tmp_path))
    net = tmp_path / "net"
    net.mkdir()
    launch = sandbox.launch(
        [sys.executable, "-I", "-S", "-c", "import os;print(os.listdir('/run/jupyter-copilot'))"],
        agent_id="some/agent id",
        net_dir=str(net),
    )
    done = run_launch(launch)
    assert done.returncode == 0, done.stderr
    assert sorted(eval(done.stdout)) == ["home", "net"]  # noqa: S307 - our own list's repr
    assert launch.env["HOME"] == AGENT_HOME and NET_DIR.startswith("/run/jupyter-copilot")
    homes = list((tmp_path / "data" / "copilot" / "agent-homes").iterdir())
    assert len(homes) == 1 and "/" not in homes[0].name and (homes[0].stat().st_mode & 0o77) == 0


def test_the_persons_settings_are_copied_into_the_agents_home_at_every_start(
    tmp_path: Path,
) -> None:
    home, own = tmp_path / "home", tmp_path / "own"
    (home / ".gemini").mkdir(parents=True)
    (home / ".gemini" / "settings.json").write_text('{"person": true}')
    (home / ".gemini" / "oauth_creds.json").write_text("secret")
    (home / ".gemini" / "link.json").symlink_to(home / ".gemini" / "settings.json")
    (own / ".gemini").mkdir(parents=True)
    # What the agent wrote into its copy last time (a hook, say) does not outlive it.
    (own / ".gemini" / "settings.json").write_text('{"hooks": "planted"}')
    copy_settings(str(home), str(own), [".gemini", ".absent"], skip=[".gemini/oauth_creds.json"])
    assert (own / ".gemini" / "settings.json").read_text() == '{"person": true}'
    assert sorted(p.name for p in (own / ".gemini").iterdir()) == ["settings.json"]


def test_paths_under_the_persons_home_in_the_env_name_the_agents_own_home() -> None:
    env = {"CLAUDE_CONFIG_DIR": "/home/ann/.claude", "X": "/home/annex", "HOME": "/home/ann"}
    assert rehomed(env, "/home/ann") == {
        "CLAUDE_CONFIG_DIR": f"{AGENT_HOME}/.claude",
        "HOME": AGENT_HOME,
    }


def test_status_says_in_words_which_property_did_not_hold(tmp_path: Path) -> None:
    sandbox = Sandbox(AUTO, None, str(tmp_path), {"seccomp": False, "filesReadOnly": True})
    assert sandbox.text == "Sandbox unavailable here (not proven: the system call filter is on)."
    checks = sandbox.to_json()["checks"]
    assert checks == [  # in the order of CHECKS, only those the probe tried
        {"name": "filesReadOnly", "ok": True, "text": CHECKS["filesReadOnly"]},
        {"name": "seccomp", "ok": False, "text": CHECKS["seccomp"]},
    ]
    missing = Sandbox(REQUIRED, None, str(tmp_path), reason="bubblewrap is not installed")
    assert "(bubblewrap is not installed): no agent can start" in missing.text


def test_an_agent_pointed_at_another_model_api_may_not_reach_its_own() -> None:
    claude = next(profile for profile, _ in KNOWN_AGENTS if profile.id == "claude-code")
    assert claude.model_hosts({}) == ("api.anthropic.com",)
    assert claude.model_hosts({"ANTHROPIC_BASE_URL": "http://127.0.0.1:5000"}) == ()


@needs_bwrap
def test_an_agent_installed_under_home_starts_wrapped_in_the_bridge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As `npm install -g --prefix ~/.local` puts it: under the HOME the sandbox hides.
    home = tmp_path / "home"
    tool = home / ".local" / "lib" / "agent"
    tool.mkdir(parents=True)
    script = tool / "agent"
    script.write_text(f"#!{sys.executable} -I\nprint('agent ran')\n")
    script.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    root = home / "project"
    root.mkdir()
    sandbox = Sandbox.detect(AUTO, str(root))
    wrapper = [
        sys.executable,
        "-I",
        "-S",
        "-c",
        "import subprocess,sys;subprocess.run(sys.argv[2:])",
    ]
    launch = sandbox.launch([*wrapper, "--", str(script)], agent_id="agent", program=[str(script)])
    done = run_launch(launch)
    assert done.stdout == "agent ran\n", done.stderr
