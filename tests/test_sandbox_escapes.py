"""A hostile agent process started by a real server cannot escape the sandbox.

The agent (tests/agents/hostile_agent.py) asks nothing and calls no tool: before it speaks
the Agent Client Protocol it tries to steal the server's token and write over the REST API,
to take a running kernel's key and run code in it, to write the person's dotfiles, Jupyter's
config, the Python install, other agents' settings and the machine's /tmp, to unmount its
way past read-only folders, and to reach the Jupyter and kernel ports. Each attempt is
judged outside, by its effect on disk or in the kernel. The server's folder lies under HOME
or is HOME, with and without the ``files`` grant (docs/security.md, "The sandbox").
"""

from __future__ import annotations

import json
import os
import sys
import sysconfig
import uuid
from pathlib import Path
from typing import Any

import pytest

from jupyter_copilot.agents.sandbox import agent_home
from tests.conversations import create, send

HOSTILE = Path(__file__).parent / "agents" / "hostile_agent.py"

pytestmark = pytest.mark.skipif(
    not os.path.exists("/usr/bin/bwrap"), reason="bubblewrap is not installed here"
)


@pytest.fixture(params=["root-under-home", "root-is-home"])
def where(request: pytest.FixtureRequest) -> str:
    """Where the server's folder lies."""
    return str(request.param)


@pytest.fixture
def jp_root_dir(jp_home_dir: Path, where: str) -> Path:
    """The server's folder: a project folder under HOME, or HOME itself."""
    if where == "root-is-home":
        return jp_home_dir
    root = jp_home_dir / "project"
    root.mkdir(exist_ok=True)
    return root


@pytest.fixture
def planted(jp_home_dir: Path, jp_config_dir: Path) -> dict[str, Path]:
    """The person's files an attacker wants, with their content before the attack."""
    files = {
        "bashrc": jp_home_dir / ".bashrc",
        "authorized_keys": jp_home_dir / ".ssh" / "authorized_keys",
        "claude": jp_home_dir / ".claude" / "settings.json",
        "gemini": jp_home_dir / ".gemini" / "settings.json",
        "netrc": jp_home_dir / ".netrc",
    }
    for name, path in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"original {name}\n")
    return files


@pytest.fixture
def copilot_config() -> dict[str, Any]:
    """Only the hostile agent, which must run sandboxed or not at all."""
    return {
        "agents": {
            "hostile": {
                "label": "Hostile",
                "command": [sys.executable, "-I", str(HOSTILE)],
                "env": {"HOSTILE_TARGETS": {"fromEnv": "HOSTILE_TARGETS"}},
            }
        },
        "discover_agents": False,
        "agent_sandbox": "required",
    }


@pytest.mark.parametrize("refs", [["files"], ["selected_cell"]], ids=["files", "no-files"])
async def test_a_hostile_agent_process_escapes_nowhere(
    jp_fetch: Any,
    jp_serverapp: Any,
    jp_root_dir: Path,
    jp_home_dir: Path,
    jp_config_dir: Path,
    jp_runtime_dir: Path,
    planted: dict[str, Path],
    copilot: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    refs: list[str],
) -> None:
    assert copilot.sandbox.active, copilot.sandbox.reason
    # What a running server and kernel leave in the runtime folder: its token, their keys.
    jp_serverapp.write_server_info_file()
    kernel_id = await jp_serverapp.kernel_manager.start_kernel()
    kernel = jp_serverapp.kernel_manager.get_kernel(kernel_id)
    connection = json.loads(Path(kernel.connection_file).read_text())
    tag = uuid.uuid4().hex
    kernel_marker = tmp_path / f"kernel-ran-{tag}"
    outside_tmp = Path("/tmp") / f"hostile-escaped-{tag}"
    site_packages = Path(sysconfig.get_paths()["purelib"]) / f"hostile-{tag}.pth"
    new_files = [
        jp_root_dir / f"rest-{tag}.txt",
        jp_root_dir / "REMOUNTED",
        jp_config_dir / "jupyter_server_config.py",
        jp_home_dir / ".jupyter" / "jupyter_server_config.py",
        outside_tmp,
        site_packages,
        kernel_marker,
    ]
    ports = [jp_serverapp.port, *(connection[k] for k in ("shell_port", "control_port"))]
    monkeypatch.setenv(
        "HOSTILE_TARGETS",
        json.dumps(
            {
                "runtime": str(jp_runtime_dir),
                "restName": f"rest-{tag}.txt",
                "kernelMarker": str(kernel_marker),
                "appends": [str(p) for p in planted.values()]
                + [str(p) for p in new_files if p not in (kernel_marker,)],
                "ports": ports,
                "root": str(jp_root_dir),
                "secret": str(planted["netrc"]),
            }
        ),
    )
    try:
        conversation = await create(jp_fetch, agentId="hostile", contextRefs=refs)
        events = await send(jp_fetch, conversation, "hello")
        assert any(e.get("type") == "end" for e in events), events
        report = json.loads((Path(agent_home("hostile")) / "report.json").read_text())
        # Judged outside: nothing landed, nothing changed, the kernel ran nothing.
        for name, path in planted.items():
            assert path.read_text() == f"original {name}\n", name
        for path in new_files:
            assert not path.exists(), path
        # And what the agent itself saw.
        assert report["token"] == [], report["token"]
        assert str(report["kernel"]).startswith("failed") or report["kernel"] == []
        for port in ports:
            assert str(report[f"connect {port}"]).startswith("failed"), report
        assert str(report["read secret"]).startswith("failed"), report["read secret"]
        assert report["home"] == "/run/jupyter-copilot/home"
    finally:
        outside_tmp.unlink(missing_ok=True)
        site_packages.unlink(missing_ok=True)
        await jp_serverapp.kernel_manager.shutdown_kernel(kernel_id, now=True)
