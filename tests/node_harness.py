"""Run the lab extension's compiled pure modules in Node.js, to compare them with Python."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

LIB = Path(__file__).parent.parent / "labextension" / "lib"


def run_node(script: str, payload: Any) -> Any:
    """Run an ES module ``script`` that reads JSON on stdin and prints JSON on stdout.

    ``LIB`` is available to the script as the module-level constant ``LIB``.
    """
    node = shutil.which("node")
    if node is None or not (LIB / "hash.js").exists():
        raise AssertionError(
            "Node.js and the compiled lab extension (labextension/lib) are required: "
            "install the package from source (pip install .) to build them."
        )
    prelude = f"const LIB = {json.dumps(LIB.as_posix())};\n"
    reader = (
        "const chunks = []; for await (const c of process.stdin) chunks.push(c);\n"
        "const input = JSON.parse(Buffer.concat(chunks).toString('utf8'));\n"
    )
    completed = subprocess.run(
        [
            node,
            "--experimental-default-type=module",
            "--input-type=module",
            "-e",
            prelude + reader + script,
        ],
        input=json.dumps(payload).encode("utf-8"),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr.decode("utf-8", "replace")
    return json.loads(completed.stdout)
