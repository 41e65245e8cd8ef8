"""The active notebook's kernel variables, read without changing anything (protocol 11.3).

:class:`KernelVariables` serves the two reads behind the ``kernel_variables`` context
reference: the list of the person's variables and the description of one of them. It finds
the kernel of the active notebook's session through the server's own session table (the
registrations of ``sessions.py``) and kernel manager, and asks it through a kernel client of
its own with one silent execute request (``silent=True``, ``store_history=False``) whose code
is empty and whose single ``user_expressions`` entry runs :mod:`.kernelinspect`, the
product's own inspection code. Nothing an agent sends is run: the only thing it chooses is a
variable name, checked here to be a dotted path of Python names and handed to the kernel as
a JSON string, never as code.

Why not the debugger's ``inspectVariables``/``richInspectVariables``: they answer on the
control channel, in the kernel's control thread, while the person's code may be running in
the main thread; ``richInspectVariables`` computes every rich representation of the object
(a DataFrame's whole HTML) with no time limit, and a ``repr`` that hangs there blocks the
control channel, which is how the person interrupts or restarts the kernel. They also need
``debugpy`` and a kernel that announces the debugger. A silent request on the shell channel
runs in the main thread only when the kernel is idle, under an alarm that stops a ``repr``
that hangs, and the kernel's control channel stays free.

A kernel that is busy (or restarting) answers ``kernel-busy`` at once (the server's own
record of the kernel's status, from its IOPub messages); a kernel whose language is not
Python answers ``unsupported-kernel``; a kernel that does not answer within the time limit
(plus a margin for the round trip) ends ``timeout``.
"""

from __future__ import annotations

import ast
import json
import keyword
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jupyter_client.session import Session

from ..protocol.refusals import Refusal
from .dispatcher import Dispatcher
from .sessions import Registrations


def _without_docs(source: str) -> str:
    """``source`` without docstrings and annotations: the kernel compiles it on every call,
    and its time grows with its length (about a third less here)."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
            and isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
        if isinstance(node, ast.FunctionDef):
            node.returns = None
            for argument in (*node.args.args, *node.args.kwonlyargs):
                argument.annotation = None
    return ast.unparse(tree)


#: The product's inspection code, run inside the kernel (never imported by the server).
INSPECT_SOURCE = _without_docs(
    (Path(__file__).parent / "kernelinspect.py").read_text(encoding="utf-8")
)
#: The longest variable path an agent may name, in characters, and its most parts.
MAX_NAME_CHARS = 200
MAX_NAME_PARTS = 8
#: Seconds the server waits beyond the kernel's own time limit for the round trip.
_MARGIN_SECONDS = 1.0
#: Seconds spent counting a DataFrame's nulls, column by column; the columns left are counted
#: in ``nullsNotCounted``. Counting scans every value, which is what makes a large frame slow.
NULL_SECONDS = 0.05


def valid_name(name: str) -> bool:
    """Whether ``name`` is a dotted path of Python names (``df``, ``model.coef_``)."""
    parts = name.split(".")
    return (
        0 < len(name) <= MAX_NAME_CHARS
        and len(parts) <= MAX_NAME_PARTS
        and all(p.isidentifier() and not keyword.iskeyword(p) for p in parts)
    )


def inspect_expression(request: dict[str, Any]) -> str:
    """The ``user_expressions`` entry that answers ``request`` in the kernel.

    The inspection code is run in a fresh dictionary (its names never reach the person's
    namespace) and handed the person's namespace (``globals()`` of the expression, which
    IPython evaluates in the user namespace). The request travels as a string literal.
    """
    payload = json.dumps(request, ensure_ascii=True)
    return (
        f"(lambda g: exec({INSPECT_SOURCE!r}, g) or g['answer']({payload!r}, globals()))"
        "({'__name__': 'jupyter_copilot_inspect'})"
    )


def parse_answer(reply: dict[str, Any]) -> dict[str, Any]:
    """The inspection's answer from an execute reply's ``user_expressions``.

    A reply without the JSON text the inspection code writes (the kernel failed to run it)
    ends ``timeout``: the kernel gave no usable answer in time.
    """
    content = reply.get("content") or {}
    entry = (content.get("user_expressions") or {}).get("inspect") or {}
    if content.get("status") != "ok" or entry.get("status") != "ok":
        raise Refusal("timeout", "The kernel could not inspect its variables; nothing changed.")
    text = (entry.get("data") or {}).get("text/plain")
    try:
        answer = json.loads(ast.literal_eval(str(text)))
    except (ValueError, SyntaxError, TypeError) as err:
        raise Refusal("timeout", "The kernel gave an unreadable answer; nothing changed.") from err
    if not isinstance(answer, dict):
        raise Refusal("timeout", "The kernel gave an unreadable answer; nothing changed.")
    return answer


class KernelVariables:
    """Lists and describes the variables of the active notebook's kernel."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        registrations: Registrations,
        kernel_manager: Any,
        kernel_spec_manager: Any,
        artifact_id: Callable[[str], str | None],
        settings: Callable[[], dict[str, Any]],
    ) -> None:
        self._dispatcher = dispatcher
        self._registrations = registrations
        self._kernels = kernel_manager
        self._specs = kernel_spec_manager
        self._artifact_id = artifact_id
        self._settings = settings

    async def list(self) -> dict[str, Any]:
        """The person's variables: name, type, shape or length, size (``omitted`` counted)."""
        return await self._ask({"op": "list"})

    async def describe(self, name: str) -> dict[str, Any]:
        """One variable, by a dotted name: ``unknown-variable`` when there is none."""
        if not valid_name(name):
            raise Refusal(
                "invalid-input",
                "The variable name must be a Python name or a dotted path of names.",
            )
        answer = await self._ask({"op": "describe", "name": name})
        if not answer.get("found"):
            raise Refusal(
                "unknown-variable",
                f"The kernel has no readable variable by that name ({answer.get('reason')}).",
            )
        del answer["found"]
        return answer

    # -- the kernel ------------------------------------------------------------------------

    def active_kernel(self) -> Any:
        """The kernel of the active notebook's session, checked to be an idle Python kernel."""
        _, active = self._dispatcher.active_notebook(
            not_a_notebook="The active tab is not a notebook."
        )
        artifact_id = self._artifact_id(active["path"])
        sessions = [
            r
            for r in self._registrations.all()
            if (artifact_id is not None and r.artifact_id == artifact_id)
            or r.path == active["path"]
        ]
        wanted = active.get("kernelSessionId")
        chosen = [r for r in sessions if r.session_id == wanted] or sessions
        if not chosen or chosen[0].kernel_id not in self._kernels:
            raise Refusal("no-active-session", "The active notebook has no running kernel.")
        kernel = self._kernels.get_kernel(chosen[0].kernel_id)
        language = self._language(kernel)
        if language != "python":
            raise Refusal(
                "unsupported-kernel",
                "Reading variables is supported for Python kernels only; this notebook's "
                f"kernel runs {language or 'an unknown language'}.",
            )
        state = getattr(kernel, "execution_state", None)
        if state == "dead":
            raise Refusal("no-active-session", "The active notebook's kernel has died.")
        # "starting" also means that no client has talked to the kernel since it started
        # (the server learns a status from the kernel's answers): its request waits for it.
        if state not in ("idle", "starting"):
            raise Refusal(
                "kernel-busy",
                "The notebook's kernel is busy (or starting); its variables can be read once "
                "it is idle.",
            )
        return kernel

    def _language(self, kernel: Any) -> str | None:
        try:
            spec = self._specs.get_kernel_spec(kernel.kernel_name)
        except Exception:
            return None
        language = getattr(spec, "language", None)
        return language.lower() if isinstance(language, str) else None

    async def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        settings = self._settings()
        seconds = float(settings["kernel_inspect_timeout_seconds"])
        budget = int(settings["context_budget_bytes"])
        kernel = self.active_kernel()
        request = {
            **request,
            "budget": budget,
            "seconds": seconds,
            "nullSeconds": min(NULL_SECONDS, seconds),
        }
        # A session of its own: the server's session object remembers the signature of
        # every message its clients receive, and this client's messages are not the server's.
        session = Session(key=kernel.session.key, signature_scheme=kernel.session.signature_scheme)
        client = kernel.client(session=session)
        client.start_channels(shell=True, iopub=False, stdin=False, hb=False, control=False)
        try:
            msg_id = client.execute(
                "",
                silent=True,
                store_history=False,
                user_expressions={"inspect": inspect_expression(request)},
                allow_stdin=False,
                stop_on_error=False,
            )
            reply = await self._reply(client, msg_id, seconds + _MARGIN_SECONDS)
        finally:
            client.stop_channels()
        answer = parse_answer(reply)
        if answer.get("timedOut"):
            raise Refusal(
                "timeout",
                f"Inspecting the variable took longer than {seconds:g} s and was stopped; "
                "nothing changed.",
            )
        if "failed" in answer:
            raise Refusal(
                "timeout",
                "The kernel could not inspect that variable "
                f"({answer['failed']}); nothing changed.",
            )
        if len(json.dumps(answer, separators=(",", ":")).encode("utf-8")) > budget:
            # The kernel's code keeps within the budget; an answer that does not is refused
            # whole rather than cut.
            raise Refusal("over-budget", "The kernel's answer is larger than the context budget.")
        return answer

    @staticmethod
    async def _reply(client: Any, msg_id: str, seconds: float) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Refusal(
                    "timeout",
                    "The kernel did not answer in time (it may have become busy); nothing changed.",
                )
            try:
                reply: dict[str, Any] = await client.get_shell_msg(timeout=left)
            except Exception:  # noqa: BLE001 - queue.Empty on timeout; the deadline decides
                continue
            if reply.get("parent_header", {}).get("msg_id") == msg_id:
                return reply
