"""The sandbox's start-up probe: run inside the sandbox, it tries what a hostile agent would.

Standard library only, run with ``python -I -S``. The argument is a JSON object: files to
``read``, files to ``write``, ``connect`` targets and folders to ``umount``. It prints what
it saw as one JSON object; ``sandbox.py`` judges writes and connections from outside too.
"""

from __future__ import annotations

import ctypes
import json
import socket
import sys

_MS_RDONLY = 1
_MS_REMOUNT = 32
_MS_BIND = 4096
_CLONE_NEWUSER = 0x10000000


def _status() -> dict[str, int]:
    wanted = {"CapEff": 16, "CapBnd": 16, "Seccomp": 10, "NoNewPrivs": 10}
    found: dict[str, int] = {}
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            name, _, value = line.partition(":")
            if name in wanted:
                found[name] = int(value.strip(), wanted[name])
    return found


def main(spec: dict[str, list]) -> dict[str, object]:
    libc = ctypes.CDLL(None, use_errno=True)
    seen: dict[str, object] = {"status": _status()}
    read: dict[str, str | None] = {}
    for path in spec.get("read", []):
        try:
            with open(path, encoding="utf-8") as f:
                read[path] = f.read(64)
        except OSError:
            read[path] = None
    seen["read"] = read
    for path in spec.get("write", []):
        try:
            with open(path, "w", encoding="utf-8") as f:
                f.write("escaped")
        except OSError:
            pass
    connected: dict[str, bool] = {}
    for host, port in spec.get("connect", []):
        try:
            with socket.create_connection((host, port), timeout=2):
                connected[f"{host}:{port}"] = True
        except OSError:
            connected[f"{host}:{port}"] = False
    seen["connect"] = connected
    mounted: dict[str, bool] = {}
    mounted["remount /"] = libc.mount(b"none", b"/", None, _MS_REMOUNT | _MS_BIND, None) == 0
    mounted["tmpfs /tmp"] = libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0
    for path in spec.get("umount", []):
        mounted[f"umount {path}"] = libc.umount2(path.encode(), 0) == 0
    mounted["remount-ro-off /"] = (
        libc.mount(b"none", b"/", None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY, None) == 0
    )
    seen["mount"] = mounted
    seen["unshareUser"] = libc.unshare(_CLONE_NEWUSER) == 0
    return seen


if __name__ == "__main__":
    sys.stdout.write(json.dumps(main(json.loads(sys.argv[1]))) + "\n")
