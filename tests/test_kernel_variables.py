"""``notebook_list_variables`` and ``notebook_describe_variable`` against real kernels.

The server, the kernel session and its IPython kernel are real; the page is scripted over the
real bridge WebSocket (it only says which notebook is active); the agent is the real MCP
client. The person's code runs through a kernel client of its own, as JupyterLab's would, and
after every inspection the person's namespace and ``In``/``Out`` history are read back through
that client and compared with what they were before.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.session import Session

from jupyter_copilot.page.kernelvars import inspect_expression, valid_name
from tests.conftest import make_notebook
from tests.eventually import eventually
from tests.mcpclient import mcp_client, mcp_url, refusal_code, structured
from tests.pages import ScriptedPage, notebook_state
from tests.server import start_session

LIST = "notebook_list_variables"
DESCRIBE = "notebook_describe_variable"

#: What the person ran before the agent looks: frames, arrays, a huge frame, objects whose
#: repr raises or hangs, and a property that must never run.
SETUP = """
import time
import numpy as np
import pandas as pd
df = pd.DataFrame({"a": [1.0, None, 3.0], "b": ["x", "y", None]})
arr = np.arange(12, dtype="int32").reshape(3, 4)
wide = pd.DataFrame(np.zeros((2000, 300)), columns=[f"column_{i:03d}" for i in range(300)])
s = pd.Series([1, None, 3], name="s")
tall = pd.DataFrame({"x": np.zeros(1_000_001)})
numbers = list(range(100_000))
class Raises:
    def __repr__(self):
        raise ValueError("no repr")
class Hangs:
    def __repr__(self):
        while True:
            time.sleep(0.01)
class Guarded:
    ran = False
    @property
    def secret(self):
        Guarded.ran = True
        return 1
class Stubborn:
    def __repr__(self):
        import signal
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        time.sleep(3)
        return "late"
raises = Raises()
stubborn = Stubborn()
hangs = Hangs()
guarded = Guarded()
"""

#: Read through a separate real execution: the namespace's names and the history.
STATE = "repr((sorted(globals()), len(In), sorted(Out), Guarded.ran))"


@pytest.fixture
def copilot_config() -> dict[str, Any]:
    return {"external_context_refs": ["kernel_variables"], "kernel_inspect_timeout_seconds": 1.0}


@pytest.fixture
def url(http_server_client: Any, jp_http_port: int, jp_base_url: str) -> str:
    return mcp_url(jp_http_port, jp_base_url)


class Person:
    """The person's own kernel client: runs cells as JupyterLab would."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        # A session of its own: the server's session object remembers the signature of every
        # message its own clients received and would drop the same IOPub message here.
        session = Session(key=kernel.session.key, signature_scheme=kernel.session.signature_scheme)
        self.client = kernel.client(session=session)
        self.client.start_channels()

    @classmethod
    async def connect(cls, kernel: Any) -> Person:
        person = cls(kernel)
        await person.client.wait_for_ready(timeout=60)
        return person

    async def run(self, code: str, store_history: bool = True, read: str = "None") -> str:
        """Run ``code`` as a cell; the text of the expression ``read`` evaluated after it."""
        msg_id = self.client.execute(
            code, store_history=store_history, user_expressions={"read": read}
        )
        while True:
            reply = await self.client.get_shell_msg(timeout=60)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        assert reply["content"]["status"] == "ok", reply["content"]
        await self.idle()
        return str(reply["content"]["user_expressions"]["read"]["data"]["text/plain"])

    async def idle(self) -> None:
        """Wait until the server has heard the kernel go idle, as JupyterLab's kernel status
        shows it. The reply to a cell can reach the person's client before the server reads
        the kernel's idle status, and until then the server rightly answers ``kernel-busy``
        (seen once in a full run)."""

        def idle() -> bool:
            return getattr(self.kernel, "execution_state", None) == "idle"

        await eventually(idle, "the server to hear the kernel idle", 30)

    async def state(self) -> str:
        # Read without a history entry of its own, so that two reads compare equal.
        return await self.run("", store_history=False, read=STATE)

    def close(self) -> None:
        self.client.stop_channels()


async def open_notebook(
    jp_fetch: Any, jp_ws_fetch: Any, root: Path, serverapp: Any, kernel_name: str = "python3"
) -> tuple[ScriptedPage, Any]:
    make_notebook(root, "a.ipynb", ["x = 1\n"])
    if kernel_name == "python3":
        model = await start_session(jp_fetch, "a.ipynb")
    else:
        body = {
            "path": "a.ipynb",
            "name": "a.ipynb",
            "type": "notebook",
            "kernel": {"name": kernel_name},
        }
        response = await jp_fetch("api", "sessions", method="POST", body=json.dumps(body))
        model = json.loads(response.body)
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("a.ipynb"))
    return page, serverapp.kernel_manager.get_kernel(model["kernel"]["id"])


@pytest.fixture
def scene(jp_fetch, jp_ws_fetch, jp_root_dir, jp_serverapp, jp_asyncio_loop) -> Any:
    """A notebook with a real kernel, open in the page, after the person ran ``SETUP``."""

    async def start() -> tuple[Any, ScriptedPage]:
        page, kernel = await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, jp_serverapp)
        person = await Person.connect(kernel)
        await person.run(SETUP)
        person.close()
        return kernel, page

    # The test's own kernel client is made on the test's loop (``person`` below).
    kernel, page = jp_asyncio_loop.run_until_complete(start())
    return kernel


async def call(url: str, headers: dict[str, str], name: str, arguments: dict[str, Any]) -> Any:
    async with mcp_client(url, headers) as client:
        return await client.call_tool(name, arguments)


# -- pure parts ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("df", True),
        ("model.coef_", True),
        ("a.b.c.d.e.f.g.h", True),
        ("a.b.c.d.e.f.g.h.i", False),
        ("df['a']", False),
        ("__import__('os').system('x')", False),
        ("df;1", False),
        ("class", False),
        ("", False),
        ("x" * 201, False),
    ],
)
def test_only_dotted_python_names_are_valid_variable_names(name: str, valid: bool) -> None:
    assert valid_name(name) is valid


def test_the_request_travels_as_a_string_literal_not_as_code() -> None:
    expression = inspect_expression({"op": "describe", "name": "df"})
    # The only names the expression uses are its own and the builtins it calls.
    assert expression.startswith("(lambda g: exec(")
    assert '"op": "describe", "name": "df"' in expression


# -- the tools, with a real kernel -----------------------------------------------------------


async def test_listing_names_types_shapes_and_sizes_and_changes_nothing(
    scene, url, jp_auth_header
) -> None:
    kernel = scene
    person = await Person.connect(kernel)
    before = await person.state()
    result = structured(await call(url, jp_auth_header, LIST, {}))
    by_name = {v["name"]: v for v in result["variables"]}
    assert result["omitted"] == 0 and result["total"] == len(by_name)
    assert by_name["df"] == {
        "name": "df",
        "type": "pandas.DataFrame",
        "kind": "dataframe",
        "shape": [3, 2],
        "length": 3,
        "bytes": by_name["df"]["bytes"],
    }
    assert by_name["df"]["bytes"] > 0
    assert by_name["arr"]["shape"] == [3, 4] and by_name["arr"]["bytes"] == 48
    assert by_name["numbers"]["length"] == 100_000
    assert by_name["raises"]["type"].endswith("Raises") and by_name["raises"]["bytes"] is None
    # Modules, classes and the kernel's own names are not the person's variables.
    assert not {"np", "pd", "time", "Raises", "In", "Out", "get_ipython"} & set(by_name)
    assert await person.state() == before


async def test_a_dataframe_is_described_with_dtypes_nulls_and_its_head(
    scene, url, jp_auth_header
) -> None:
    kernel = scene
    person = await Person.connect(kernel)
    before = await person.state()
    result = structured(await call(url, jp_auth_header, DESCRIBE, {"name": "df"}))
    assert result["kind"] == "dataframe" and result["shape"] == [3, 2]
    assert result["columns"] == [
        {"name": "a", "dtype": "float64", "nulls": 1},
        {"name": "b", "dtype": result["columns"][1]["dtype"], "nulls": 1},
    ]
    assert result["head"][0] == {"index": 0, "values": [1.0, "x"]}
    assert len(result["head"]) == 3
    assert result["headRowsOmitted"] == 0 and result["columnsOmitted"] == 0
    assert result["nullsNotCounted"] == 0
    series = structured(await call(url, jp_auth_header, DESCRIBE, {"name": "s"}))
    assert series["kind"] == "series" and series["nulls"] == 1 and series["dtype"] == "float64"
    assert await person.state() == before


async def test_an_array_is_described_with_shape_and_dtype(scene, url, jp_auth_header) -> None:
    result = structured(await call(url, jp_auth_header, DESCRIBE, {"name": "arr"}))
    assert result["kind"] == "array" and result["shape"] == [3, 4]
    assert result["dtype"] == "int32" and result["bytes"] == 48
    assert result["repr"].startswith("array([[ 0,  1,  2,  3],")
    assert result["reprOmittedChars"] == 0


async def test_huge_objects_fit_the_budget_and_say_what_was_left_out(
    scene, url, jp_auth_header, copilot
) -> None:
    kernel = scene
    person = await Person.connect(kernel)
    before = await person.state()
    budget = copilot.context_budget_bytes
    wide = await call(url, jp_auth_header, DESCRIBE, {"name": "wide"})
    result = structured(wide)
    assert len(wide.content[0].text.encode()) <= budget
    assert result["shape"] == [2000, 300]
    assert result["headRowsOmitted"] == 5 and result["head"] == []
    assert result["columnsOmitted"] > 0
    assert len(result["columns"]) + result["columnsOmitted"] == 300
    # Counting nulls scans every value: a frame this tall says its nulls were not counted.
    tall = structured(await call(url, jp_auth_header, DESCRIBE, {"name": "tall"}))
    assert tall["nullsNotCounted"] == 1 and tall["columns"][0]["nulls"] is None
    assert tall["head"][0] == {"index": 0, "values": [0.0]}
    numbers = structured(await call(url, jp_auth_header, DESCRIBE, {"name": "numbers"}))
    assert numbers["reprAbbreviated"] is True and numbers["repr"].endswith("...]")
    # Many variables: the list is cut at a whole entry and the rest counted.
    await person.run("for _i in range(400): globals()[f'v{_i:03d}'] = _i\ndel _i")
    listed = await call(url, jp_auth_header, LIST, {})
    result = structured(listed)
    assert len(listed.content[0].text.encode()) <= budget
    assert result["omitted"] > 0
    assert len(result["variables"]) + result["omitted"] == result["total"]
    assert await person.state() != before  # the person's own loop added names


async def test_a_repr_that_raises_or_hangs_is_reported_and_the_kernel_goes_on(
    scene, url, jp_auth_header
) -> None:
    kernel = scene
    person = await Person.connect(kernel)
    before = await person.state()
    raised = structured(await call(url, jp_auth_header, DESCRIBE, {"name": "raises"}))
    assert raised["repr"] is None and raised["reprError"] == "ValueError"
    started = time.monotonic()
    hung = structured(await call(url, jp_auth_header, DESCRIBE, {"name": "hangs"}))
    assert hung["repr"] is None and hung["reprError"] == "timed out"
    assert time.monotonic() - started < 5
    assert await person.state() == before
    assert await person.run("", read="'ok'") == "'ok'"


async def test_a_property_is_never_run_and_a_missing_name_is_unknown(
    scene, url, jp_auth_header
) -> None:
    kernel = scene
    person = await Person.connect(kernel)
    before = await person.state()
    code = refusal_code(await call(url, jp_auth_header, DESCRIBE, {"name": "guarded.secret"}))
    assert code == "unknown-variable"
    assert refusal_code(await call(url, jp_auth_header, DESCRIBE, {"name": "nope"})) == (
        "unknown-variable"
    )
    bad = await call(url, jp_auth_header, DESCRIBE, {"name": "__import__('os')"})
    assert refusal_code(bad) == "invalid-input"
    after = await person.state()
    assert after == before and after.endswith('False)"')


async def test_a_busy_kernel_answers_busy_at_once(scene, url, jp_auth_header) -> None:
    kernel = scene
    person = await Person.connect(kernel)
    person.client.execute("time.sleep(3)")

    async def busy() -> bool:
        return kernel.execution_state == "busy"

    await eventually(busy, "the kernel to be busy", 10)
    started = time.monotonic()
    result = await call(url, jp_auth_header, LIST, {})
    assert refusal_code(result) == "kernel-busy"
    assert time.monotonic() - started < 1.0


async def test_without_the_grant_the_tools_are_blocked(scene, url, jp_auth_header, copilot) -> None:
    copilot.external_context_refs = ["selected_cell"]
    assert refusal_code(await call(url, jp_auth_header, LIST, {})) == "blocked"
    assert refusal_code(await call(url, jp_auth_header, DESCRIBE, {"name": "df"})) == "blocked"


async def test_a_kernel_in_another_language_is_not_supported(
    jp_fetch, jp_ws_fetch, jp_root_dir, jp_serverapp, jp_kernel_dir, url, jp_auth_header
) -> None:
    pytest.importorskip("bash_kernel")
    spec = Path(jp_kernel_dir) / "bash"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [sys.executable, "-m", "bash_kernel", "-f", "{connection_file}"],
                "display_name": "Bash",
                "language": "bash",
            }
        )
    )
    await open_notebook(jp_fetch, jp_ws_fetch, jp_root_dir, jp_serverapp, "bash")
    result = await call(url, jp_auth_header, LIST, {})
    assert refusal_code(result) == "unsupported-kernel"
    assert "Python kernels only" in structured(result)["error"]["message"]


async def test_without_a_kernel_session_there_is_no_active_session(
    jp_root_dir, jp_ws_fetch, url, jp_auth_header
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", ["x = 1\n"])
    page = await ScriptedPage.connect(jp_ws_fetch, "p-1")
    await page.send_state(notebook_state("a.ipynb"))
    await asyncio.sleep(0)
    assert refusal_code(await call(url, jp_auth_header, LIST, {})) == "no-active-session"


async def test_the_context_menu_offers_kernel_variables_off_by_default(jp_fetch) -> None:
    body = json.loads((await jp_fetch("copilot", "api", "agents")).body)
    offered = {ref["id"]: ref for ref in body["contextRefs"]}
    assert offered["kernel_variables"]["label"] == "Kernel variables"
    assert "kernel_variables" not in body["defaults"]["contextRefs"]


async def test_the_kill_switch_stops_both_tools_before_the_grant_is_checked(
    scene, url, jp_auth_header, jp_config_dir, copilot
) -> None:
    copilot.external_context_refs = []
    (Path(jp_config_dir) / "jupyter_copilot_config.json").write_text(
        json.dumps({"CopilotApp": {"tools_enabled": False}})
    )

    async def engaged() -> bool:
        return bool(copilot.kill_switch_state().engaged)

    await eventually(engaged, "the kill switch to engage", 10)
    assert refusal_code(await call(url, jp_auth_header, LIST, {})) == "kill-switch"
    assert refusal_code(await call(url, jp_auth_header, DESCRIBE, {"name": "df"})) == "kill-switch"
    bad = await call(url, jp_auth_header, DESCRIBE, {"name": "df[0]"})
    assert refusal_code(bad) == "invalid-input"


async def test_a_kernel_that_does_not_answer_in_time_ends_timeout(
    scene, url, jp_auth_header
) -> None:
    # This repr ignores the kernel's alarm: only the server's own wait ends the call.
    started = time.monotonic()
    result = await call(url, jp_auth_header, DESCRIBE, {"name": "stubborn"})
    assert refusal_code(result) == "timeout"
    assert time.monotonic() - started < 2.9
