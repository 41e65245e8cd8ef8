"""The README and the guides, checked against the product so that they cannot rot silently.

- Every shell command in a ``bash`` block is run: by CI (the command appears in a ``.ci``
  script or ``binder/postBuild``) or by a test here, in a sandbox (`tests.docsandbox`) where
  the system-wide commands are real but touch nothing outside the test.
- Every Python and JSON config snippet is loaded into the real traits.
- The MCP client settings connect the real MCP client to a real server.
- The admin guide's tables list every setting with its default and every event with its
  fields.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from traitlets.config import Application, Config

from jupyter_copilot.agents.catalog import FromEnv
from jupyter_copilot.agents.models import parse_model
from jupyter_copilot.server.app import CopilotApp

from .docsandbox import Sandbox, require_namespaces
from .mcpclient import mcp_client
from .server import call_action

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
CI_SCRIPTS = [*sorted((REPO / ".ci").iterdir()), REPO / "binder" / "postBuild"]
EVENTS = REPO / "jupyter_copilot" / "events"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)

#: Blocks run by the tests of this file, by their first command.
RUN_HERE = {
    "jupyter copilot kill-switch on --sys-prefix": "test_readme_kill_switch_block",
    "jupyter --paths": "test_admin_config_paths",
    "jupyter copilot kill-switch on --system": "test_admin_kill_switch_blocks",
    "jupyter copilot kill-switch off --system": "test_admin_kill_switch_blocks",
    'curl -s -H "Authorization: token $JUPYTER_TOKEN" "${JUPYTER_URL}copilot/api/status"': (
        "test_admin_kill_switch_blocks"
    ),
    "mkdir -p /usr/local/share/jupyter/copilot/skills/team-conventions": (
        "test_admin_skill_install"
    ),
    # The README's "Use your own model": its settings, not Ollama or a paid endpoint (the
    # server side is tests/test_readme_models.py and tests/test_model_config.py).
    "ollama pull qwen2.5-coder:7b": "test_readme_use_your_own_model",
    "export OPENAI_API_KEY=sk-...": "test_readme_use_your_own_model",
}


@dataclass(frozen=True)
class Block:
    """One fenced code block of a document."""

    path: Path
    line: int
    lang: str
    text: str

    def __str__(self) -> str:
        return f"{self.path.relative_to(REPO)}:{self.line}"


def blocks(lang: str) -> list[Block]:
    """Every fenced block of one language in README.md and docs/*.md."""
    found = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            if match.group(1) == lang:
                line = text.count("\n", 0, match.start()) + 1
                found.append(Block(path, line, lang, match.group(2)))
    return found


def commands(text: str) -> list[str]:
    """The commands of a shell block: continuations joined, comments and blank lines dropped."""
    joined = re.sub(r"\\\n\s*", "", text)
    found = []
    for line in joined.splitlines():
        command = re.sub(r"\s+#.*$", "", line).strip()
        if command and not command.startswith("#"):
            found.append(command)
    return found


def block_starting(first: str) -> Block:
    """The one shell block whose first command is ``first``."""
    matches = [b for b in blocks("bash") if commands(b.text)[:1] == [first]]
    assert len(matches) == 1, f"expected one bash block starting with {first!r}: {matches}"
    return matches[0]


def block_containing(lang: str, text: str) -> Block:
    """The one block of ``lang`` that contains ``text``."""
    matches = [b for b in blocks(lang) if text in b.text]
    assert len(matches) == 1, f"expected one {lang} block containing {text!r}: {matches}"
    return matches[0]


def run_by_ci(command: str) -> bool:
    """Whether a CI script runs ``command`` as written (maybe with more options after it)."""
    return any(command in p.read_text(encoding="utf-8") for p in CI_SCRIPTS if p.is_file())


# -- every command is run somewhere -------------------------------------------------------------


def test_every_shell_command_in_the_docs_is_run_by_ci_or_by_a_test_here() -> None:
    shell = blocks("bash")
    assert len(shell) >= 8
    assert not blocks("sh") and not blocks("shell") and not blocks("console")
    unrun = []
    for block in shell:
        found = commands(block.text)
        if found[0] in RUN_HERE:
            assert RUN_HERE[found[0]] in globals(), RUN_HERE[found[0]]
            continue
        unrun += [f"{block}: {c}" for c in found if not run_by_ci(c)]
    assert not unrun, "commands no test or CI script runs:\n" + "\n".join(unrun)


def test_the_quick_start_commands_are_the_ones_ci_runs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    # Its "Use your own model" needs a model: test_readme_use_your_own_model.
    quick = quick.split("\n### Use your own model", 1)[0]
    found = [c for b in FENCE.findall(quick) if b[0] == "bash" for c in commands(b[1])]
    assert found == [
        'pip install ".[demo]" && jupyter lab --allow-root binder/demo.ipynb',
        'pip install ".[test]" && python -m pytest',
    ]
    assert all(run_by_ci(c) for c in found)
    start = re.search(r"urlpath=([^)\s`&\"]+)", quick)
    assert start is not None and start.group(1) == "lab/tree/binder/demo.ipynb"
    assert (REPO / start.group(1).removeprefix("lab/tree/")).is_file()


def test_readme_use_your_own_model() -> None:
    """Ollama's models need no setting (discovery is on by default at Ollama's own port);
    the key command's setting, as the command line reads it, is the model agent it names,
    with the key read from the variable the first command exports."""
    ollama = commands(block_starting("ollama pull qwen2.5-coder:7b").text)
    assert ollama[1] == "jupyter lab --allow-root binder/demo.ipynb"
    assert CopilotApp.discover_models.default_value is None
    assert CopilotApp.ollama_url.default_value == "http://127.0.0.1:11434"
    export, lab = commands(block_starting("export OPENAI_API_KEY=sk-...").text)
    words = shlex.split(lab)
    assert words[:4] == ["jupyter", "lab", "--allow-root", "binder/demo.ipynb"]
    [setting] = words[4:]
    app = Application(classes=[CopilotApp])  # type: ignore[call-arg]
    app.parse_command_line([setting])
    models = CopilotApp(config=app.config).models
    [(model_id, entry)] = models.items()
    spec = parse_model(model_id, entry)
    assert spec.env["COPILOT_MODEL_API_KEY"] == FromEnv(export.split()[1].split("=")[0])
    assert spec.env["COPILOT_MODEL_PROVIDER"] == "openai-compatible"


# -- the system-wide commands, in a sandbox ------------------------------------------------------


@pytest.fixture
def sandbox(tmp_path: Path) -> Iterator[Sandbox]:
    """A private view of the system's Jupyter folders (see tests/docsandbox.py)."""
    require_namespaces()
    box = Sandbox(tmp_path)
    try:
        yield box
    finally:
        box.close()


def run_kill_switch_commands(sandbox: Sandbox, block: Block) -> None:
    """Run a kill-switch block's commands one by one, checking the running server after each."""
    for command in commands(block.text):
        out = sandbox.run(command).stdout
        verb = command.split()[3]
        if verb == "on":
            assert "Kill switch ENGAGED" in out
            status = sandbox.wait_status("toolsEnabled", False)
            assert status["killSwitch"] == {"engaged": True, "source": "file"}
        elif verb == "off":
            assert "No config file engages the kill switch any more" in out
            status = sandbox.wait_status("toolsEnabled", True)
            assert status["killSwitch"]["engaged"] is False
        else:
            assert verb == "status", command
            assert "Verdict from these files: ENGAGED by a live config file." in out


def test_readme_kill_switch_block(sandbox: Sandbox) -> None:
    sandbox.start_server()
    run_kill_switch_commands(sandbox, block_starting("jupyter copilot kill-switch on --sys-prefix"))


def test_admin_kill_switch_blocks(sandbox: Sandbox) -> None:
    sandbox.start_server()
    curl = commands(block_starting(next(k for k in RUN_HERE if k.startswith("curl"))).text)
    assert len(curl) == 1
    assert json.loads(sandbox.run(curl[0]).stdout) == sandbox.status()
    run_kill_switch_commands(sandbox, block_starting("jupyter copilot kill-switch on --system"))
    engaged = json.loads(sandbox.run(curl[0]).stdout)
    assert engaged["toolsEnabled"] is False
    # The guide's sample answer has exactly the keys of the real one.
    sample = json.loads(block_containing("json", '"killSwitch"').text)
    assert sample.keys() == engaged.keys()
    assert sample["killSwitch"] == engaged["killSwitch"]
    written = sandbox.run("cat /usr/local/etc/jupyter/jupyter_copilot_config.json").stdout
    assert json.loads(written) == json.loads(block_containing("json", '"tools_enabled"').text)
    run_kill_switch_commands(sandbox, block_starting("jupyter copilot kill-switch off --system"))


def test_admin_config_paths(sandbox: Sandbox) -> None:
    out = sandbox.run("jupyter --paths").stdout
    for folder in ("/usr/local/etc/jupyter", "/etc/jupyter", "/usr/local/share/jupyter"):
        assert f"    {folder}\n" in out


def test_admin_skill_install(sandbox: Sandbox) -> None:
    skill = block_containing("markdown", "id: team-conventions")
    (sandbox.cwd / "team-conventions").mkdir()
    (sandbox.cwd / "team-conventions" / "SKILL.md").write_text(skill.text, encoding="utf-8")
    for command in commands(block_starting(next(k for k in RUN_HERE if "skills" in k)).text):
        sandbox.run(command)
    sandbox.start_server()
    log = sandbox.server_log.read_text()
    available = re.search(r"Skills available: (.*)", log)
    assert available is not None, log
    assert "team-conventions" in available.group(1).split(", ")
    assert "Skipped skill" not in log


def test_admin_feature_switch_file_turns_copilot_off(sandbox: Sandbox) -> None:
    switch = block_containing("json", '"enabled": false')
    target = "/usr/local/etc/jupyter/jupyter_copilot_config.json"
    sandbox.run(f"mkdir -p /usr/local/etc/jupyter && cat > {target} <<'EOF'\n{switch.text}EOF")
    sandbox.start_server()
    status = sandbox.status()
    assert status["enabled"] is False and status["toolsEnabled"] is True
    mcp = sandbox.run(
        f'curl -s -o /dev/null -w "%{{http_code}}" -X POST -H "Authorization: token '
        f'{sandbox.token}" {sandbox.url}copilot/mcp'
    ).stdout
    assert mcp == "503"
    # The kill switch's own file content, written while the server runs, engages it.
    kill = block_containing("json", '"tools_enabled": false')
    sandbox.run(f"cat > {target} <<'EOF'\n{kill.text}EOF")
    sandbox.wait_status("toolsEnabled", False)


# -- config snippets and client settings ---------------------------------------------------------


def snippet_config(block: Block) -> Config:
    """A Python config block, executed the way a config file is."""
    config = Config()
    exec(compile(block.text, str(block), "exec"), {"c": config, "get_config": lambda: config})
    return config


def test_python_config_snippets_set_real_copilot_traits() -> None:
    snippets = [b for b in blocks("python") if "c.CopilotApp." in b.text]
    assert len(snippets) >= 3
    traits = CopilotApp.class_traits(config=True)
    for block in snippets:
        config = snippet_config(block)
        assert set(config) == {"CopilotApp"}, block
        assert set(config.CopilotApp) <= set(traits), block
        app = CopilotApp(config=config)
        for name, value in config.CopilotApp.items():
            assert getattr(app, name) == value, (block, name)


def test_json_config_snippets_set_real_copilot_traits() -> None:
    parsed = [(b, json.loads(b.text)) for b in blocks("json") if '"CopilotApp"' in b.text]
    assert len(parsed) >= 2
    for block, data in parsed:
        assert set(data) == {"CopilotApp"}, block
        app = CopilotApp(config=Config(data))
        for name, value in data["CopilotApp"].items():
            assert getattr(app, name) == value, (block, name)


@pytest.fixture
def jp_server_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    """The test server, with the admin guide's event handler (its file lands in tmp_path)."""
    monkeypatch.chdir(tmp_path)
    events = snippet_config(block_containing("python", "c.EventLogger.handlers"))
    return Config(
        {
            "ServerApp": {"jpserver_extensions": {"jupyter_copilot": True}},
            "EventLogger": events.EventLogger,
        }
    )


async def test_the_event_handler_snippet_writes_content_free_events(
    jp_fetch: Any, tmp_path: Path
) -> None:
    status, body = await call_action(
        jp_fetch, "jupyter_copilot.notebook.get-context", {"data": {}, "pageId": "secret-page"}
    )
    assert status == 404 and body["error"]["code"] == "no-active-page"
    lines = (tmp_path / "jupyter-events.log").read_text().splitlines()
    events = [json.loads(line) for line in lines]
    ours = [e for e in events if "jupyter_copilot" in e["__schema__"]]
    assert [e["__schema__"] for e in ours] == [
        "https://events.jupyter.org/jupyter_copilot/context/served/v1"
    ]
    assert ours[0]["outcome"] == "no-active-page"
    assert "secret-page" not in "\n".join(lines)


async def test_mcp_client_settings_connect_the_real_client(
    jp_serverapp: Any, http_server_client: Any
) -> None:
    settings = [json.loads(b.text) for b in blocks("json") if "copilot/mcp" in b.text]
    assert len(settings) == 2
    token = jp_serverapp.identity_provider.token
    base = f"http://localhost:{jp_serverapp.port}{jp_serverapp.base_url}"
    for document in settings:
        (server,) = (document.get("mcpServers") or document["servers"]).values()
        assert server["type"] == "http"
        url = server["url"].replace("http://localhost:8888/", base)
        headers = {
            k: re.sub(r"\$\{(env:)?JUPYTER_TOKEN\}", token, v) for k, v in server["headers"].items()
        }
        assert headers == {"Authorization": f"token {token}"}
        async with mcp_client(url, headers) as client:
            tools = await client.list_tools()
        assert "notebook_edit_cell" in [t.name for t in tools.tools]


# -- the admin guide's tables -------------------------------------------------------------------


def table_rows(heading: str) -> list[list[str]]:
    """The body rows of the first table under ``heading`` in docs/admin.md, cells stripped."""
    text = (REPO / "docs" / "admin.md").read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [[c.strip() for c in row.strip("|").split("|")] for row in rows[2:]]


def test_the_admin_guide_lists_every_setting_with_its_default() -> None:
    ours = {
        name: trait.default()
        for name, trait in CopilotApp.class_traits(config=True).items()
        if trait.this_class.__module__.startswith("jupyter_copilot")
    }
    documented = {}
    for name, default, meaning in table_rows("Settings"):
        assert meaning, name
        documented[name.strip("`")] = ast.literal_eval(default.strip("`"))
    assert documented == ours


def test_the_admin_guide_lists_every_event_with_its_fields() -> None:
    schemas = {}
    for path in EVENTS.glob("*.yaml"):
        schema = yaml.safe_load(path.read_text(encoding="utf-8"))
        event = schema["$id"].removeprefix("https://events.jupyter.org/jupyter_copilot/")
        schemas[event] = sorted(schema["properties"])
    documented = {}
    for event, when, fields in table_rows("Events and logs"):
        assert when, event
        documented[event.strip("`")] = sorted(f.strip(" `") for f in fields.split(","))
    assert documented == schemas
