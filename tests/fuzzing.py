"""Fuzzing a running server: a real ``jupyter server`` subprocess and Hypothesis strategies.

Shared by ``tests/test_fuzz.py`` (a small budget, run by CI) and ``bench/fuzz.py`` (10,000
inputs and more). Every input goes to a real endpoint over real HTTP or WebSocket; what is
checked is the server's answer: never a 5xx, always the contract's error shape, the bridge
connection still open, and the server still answering status.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.eventually import eventually_blocking

REPO = Path(__file__).resolve().parent.parent
ACTIONS = (
    "jupyter_copilot.notebook.get-context",
    "jupyter_copilot.notebook.edit-cell.invoke",
    "jupyter_copilot.notebook.edit-cell.abort",
    "jupyter_copilot.notebook.insert-cell.invoke",
    "jupyter_copilot.notebook.insert-cell.abort",
    "jupyter_copilot.notebook.unknown",
)
MCP_TOOLS = (
    "context_snapshot",
    "notebook_read_selected_cell",
    "notebook_read_cells",
    "notebook_edit_cell",
    "notebook_insert_cell",
    "skill_read",
    "no_such_tool",
)

# -- strategies --------------------------------------------------------------------------------

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
    | st.sampled_from(["", "sha256:" + "0" * 64, "plan", "autopilot", "files", "keep", "x" * 300])
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=12), children, max_size=5)
    ),
    max_leaves=25,
)
#: Objects with the field names the endpoints know, holding anything.
known_fields = st.dictionaries(
    st.sampled_from(
        [
            "data",
            "pageId",
            "callId",
            "agentId",
            "chatOnly",
            "contextRefs",
            "mode",
            "text",
            "attachment",
            "decision",
            "optionId",
            "artifactId",
            "cellId",
            "expectedSourceHash",
            "newSource",
            "type",
            "protocol",
            "url",
            "state",
            "fingerprint",
            "requestId",
            "ok",
            "error",
            "skillId",
            "offset",
            "limit",
        ]
    ),
    json_values,
    max_size=6,
)
#: Raw request bodies: JSON of any shape, near-miss JSON, bytes, and absurd nesting.
bodies = st.one_of(
    known_fields.map(json.dumps),
    json_values.map(json.dumps),
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
    st.integers(1, 5000).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 5000).map(lambda n: '{"a":' * n + "1" + "}" * n),
    st.text(max_size=50).map(lambda t: '{"data": ' + t),
)
bridge_messages = st.one_of(
    known_fields.map(json.dumps),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["hello", "state", "result", "keep", "review", "pong", ""])},
        optional={
            "pageId": json_values,
            "protocol": json_values,
            "url": json_values,
            "state": json_values,
            "fingerprint": json_values,
            "requestId": json_values,
            "ok": json_values,
            "data": json_values,
            "callId": json_values,
            "decision": json_values,
        },
    ).map(json.dumps),
    bodies,
)


# -- the server --------------------------------------------------------------------------------


@dataclass
class Tally:
    """What a fuzzing run sent and what came back."""

    inputs: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    server_errors: list[str] = field(default_factory=list)

    def count(self, status: int, what: str) -> None:
        self.inputs += 1
        self.statuses[status] = self.statuses.get(status, 0) + 1
        # 503 (a switch) and 504 (a page that did not answer) are refusals of the contract.
        if status >= 500 and status not in (503, 504):
            self.server_errors.append(what[:300])


class FuzzServer:
    """A ``jupyter server`` with jupyter-copilot and the demo agent, on a free port."""

    def __init__(self, port: int, token: str, log: Path, process: subprocess.Popen[bytes]):
        self.port = port
        self.token = token
        self.log = log
        self.process = process
        self._conn: http.client.HTTPConnection | None = None

    def request(
        self, method: str, path: str, body: str | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, bytes, dict[str, str]]:
        """One HTTP request; a dropped connection is opened again once."""
        for attempt in (1, 2):
            if self._conn is None:
                self._conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            try:
                self._conn.request(
                    method,
                    path,
                    body=body.encode("utf-8", "surrogatepass") if body is not None else None,
                    headers={"Authorization": f"token {self.token}", **(headers or {})},
                )
                response = self._conn.getresponse()
                data = response.read()
                return response.status, data, dict(response.getheaders())
            except (OSError, http.client.HTTPException):
                self._conn.close()
                self._conn = None
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def status(self) -> dict[str, Any]:
        """``copilot/api/status``: the server still answers."""
        code, data, _ = self.request("GET", "/copilot/api/status")
        assert code == 200, code
        return dict(json.loads(data))

    def websocket(self) -> Any:
        """A bridge WebSocket of a page."""
        import websocket

        return websocket.create_connection(
            f"ws://127.0.0.1:{self.port}/copilot/api/bridge",
            header=[f"Authorization: token {self.token}"],
            timeout=10,
        )

    def tracebacks(self) -> list[str]:
        """Lines of the server log that report an error with a traceback."""
        text = self.log.read_text(errors="replace")
        return [line for line in text.splitlines() if line.startswith("[E ") or "Traceback" in line]


@contextlib.contextmanager
def fuzz_server(tmp: Path) -> Iterator[FuzzServer]:
    """Start the server in ``tmp`` with isolated Jupyter folders; stop it however it ends."""
    (tmp / "root").mkdir(parents=True, exist_ok=True)
    (tmp / "config").mkdir(exist_ok=True)
    extensions = {"jpserver_extensions": {"jupyter_copilot": True, "jupyter_server_fileid": True}}
    (tmp / "config" / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": extensions})
    )
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    token = secrets.token_hex(16)
    log = tmp / "server.log"
    env = dict(os.environ, JUPYTER_CONFIG_DIR=f"{tmp}/config", JUPYTER_DATA_DIR=f"{tmp}/data")
    env.update(JUPYTER_RUNTIME_DIR=f"{tmp}/runtime", IPYTHONDIR=f"{tmp}/ipython")
    args = [
        "--no-browser", "--allow-root", f"--port={port}", "--ip=127.0.0.1",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp}/root",
        f"--BaseFileIdManager.db_path={tmp}/fileid.db",
    ]  # fmt: skip
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyter", "server", *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = FuzzServer(port, token, log, process)

    def enabled() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited:\n{log.read_text()[-3000:]}")
        return bool(server.status().get("enabled"))

    try:
        eventually_blocking(
            enabled,
            "the server to start",
            90,
            interval=0.3,
            ignoring=(OSError, http.client.HTTPException, AssertionError),
        )
        yield server
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


# -- one input each ----------------------------------------------------------------------------


def check_answer(status: int, data: bytes, what: str) -> None:
    """A refusal is the contract's error shape; nothing is a server error.

    503 (a switch) and 504 (a page that did not answer) are refusals of the contract.
    """
    assert status < 500 or status in (503, 504), f"{status} for {what}"
    if status >= 400:
        body = json.loads(data)
        assert isinstance(body["error"]["code"], str) and body["error"]["message"], what


def rest_targets(conversation_id: str) -> list[tuple[str, str]]:
    """Every JSON REST endpoint, with a live conversation where one is needed."""
    one = f"/copilot/api/conversations/{conversation_id}"
    return [
        *(("POST", f"/copilot/api/actions/{action}") for action in ACTIONS),
        ("POST", "/copilot/api/conversations"),
        ("PATCH", one),
        ("POST", f"{one}/messages"),
        ("POST", f"/copilot/api/approvals/{'0' * 32}"),
        ("POST", f"/copilot/api/file-reviews/{'0' * 32}"),
    ]


def mcp_post(
    server: FuzzServer, message: dict[str, Any], session: str | None = None
) -> tuple[int, bytes, dict[str, str]]:
    """One JSON-RPC message to ``copilot/mcp``, in an MCP session when ``session`` is given."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if session is not None:
        headers["Mcp-Session-Id"] = session
    return server.request("POST", "/copilot/mcp", json.dumps(message), headers)


def mcp_tool_call(
    server: FuzzServer, session: str, tool: str, arguments: Any
) -> tuple[int, bytes, dict[str, str]]:
    """``tools/call`` of ``tool`` with ``arguments``, whatever they are."""
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    return mcp_post(server, call, session)


def mcp_session(server: FuzzServer) -> str:
    """Open an MCP session on ``copilot/mcp``; its id."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "0"},
        },
    }
    status, _, headers = mcp_post(server, initialize)
    assert status == 200, status
    session = {k.lower(): v for k, v in headers.items()}["mcp-session-id"]
    mcp_post(server, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    return session
