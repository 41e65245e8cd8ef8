"""The lab extension's Jest tests (labextension/test), run by `jlpm test`.

The pure TypeScript modules (hash, review checks, the chat reducer, output digests, reply
blocks, paging) are tested with Jest; this runs them as part of `python -m pytest`.
Installing the package from source (`pip install ".[test]"`) installs the Node modules.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

LABEXTENSION = Path(__file__).parent.parent / "labextension"


def test_the_typescript_unit_tests_pass() -> None:
    jlpm = shutil.which("jlpm")
    assert jlpm is not None, "jlpm (installed with JupyterLab) is needed to run the Jest tests."
    assert (LABEXTENSION / "node_modules" / "jest").is_dir(), (
        "labextension/node_modules has no Jest: install the package from source "
        '(pip install ".[test]") or run `jlpm install` in labextension/.'
    )
    completed = subprocess.run(
        [jlpm, "test", "--ci"],
        cwd=LABEXTENSION,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env={**os.environ, "FORCE_COLOR": "0", "CI": "true"},
    )
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, f"jlpm test failed:\n{output}"
    assert "Tests:" in output, f"Jest ran no tests:\n{output}"
