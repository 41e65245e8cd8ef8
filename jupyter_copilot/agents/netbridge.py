"""Inside the sandbox: the agent's only network, then the agent itself.

Standard library only, run with ``python -I -S``. The sandboxed agent has a network of its
own with nothing but a loopback. This program listens there on the ports it is given and
carries each connection, byte for byte, to a Unix socket that ``egress.py`` serves outside
and that decides where (if anywhere) it may go. Then it runs the agent with the same
standard streams and ends with its exit code.

Usage: ``netbridge.py --forward PORT=SOCKET ... -- COMMAND ...``
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import threading

_CHUNK = 64 * 1024


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(_CHUNK):
            sink.sendall(data)
    except OSError:
        # One side went away: the copy ends.
        return
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


def _carry(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


def _serve(listener: socket.socket, path: str) -> None:
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        threading.Thread(target=_carry, args=(client, path), daemon=True).start()


def _listen(port: int) -> list[socket.socket]:
    """Listeners on 127.0.0.1 and, where it exists, ::1 (``localhost`` may be either)."""
    listeners = []
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            listener = socket.socket(family, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((host, port))
            listener.listen(64)
        except OSError:
            if family == socket.AF_INET:
                raise
            continue
        listeners.append(listener)
    return listeners


def main(argv: list[str]) -> int:
    if "--" not in argv:
        sys.stderr.write("netbridge: usage: --forward PORT=SOCKET ... -- COMMAND\n")
        return 2
    split = argv.index("--")
    options, command = argv[:split], argv[split + 1 :]
    if not command or len(options) % 2:
        sys.stderr.write("netbridge: no command\n")
        return 2
    for flag, value in zip(options[::2], options[1::2], strict=True):
        if flag != "--forward":
            sys.stderr.write(f"netbridge: unknown option {flag}\n")
            return 2
        port, _, path = value.partition("=")
        for listener in _listen(int(port)):
            threading.Thread(target=_serve, args=(listener, path), daemon=True).start()
    child = subprocess.Popen(command)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda number, _frame: child.send_signal(number))
    code = child.wait()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
