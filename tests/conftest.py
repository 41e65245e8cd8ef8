"""Shared test setup: the fixtures of each layer, as plugins, and helpers for notebooks and data.

Fixtures live in tests/fixtures/ by layer: ``unit`` (no Jupyter server), ``server``
(pytest-jupyter's Jupyter server with jupyter-copilot and the file-ID service) and
``browser`` (JupyterLab in Chromium, for tests marked ``browser``). Tests use them by name.

The suite runs in parallel (pytest-xdist, ``-n auto`` in pyproject.toml; ``-n 0`` runs it in
one process): every test keeps what it writes under its own tmp dir, and what it looks for
among the machine's processes it has named uniquely.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest

pytest_plugins = (
    "pytest_jupyter.jupyter_server",
    "tests.fixtures.unit",
    "tests.fixtures.server",
    "tests.fixtures.browser",
    "tests.fixtures.order",
)

DATA = Path(__file__).parent / "data"

#: Test modules whose outcome does not depend on the Python version that runs pytest, marked
#: ``once``: CI runs them on one Python only (``-m "not once"`` leaves them out). Each is here
#: for what it checks: code run by Node.js or by third-party programs, or text.
ONCE = {
    "test_typescript_units.py": "the lab extension's Jest tests, in Node.js",
    "test_read_cells.py": "the compiled lab extension's read-cells answer, in Node.js",
    "test_protocol_source.py": "the protocol's names in the Python, TypeScript and docs sources",
    "test_layout.py": "the package's import graph, read from the source",
    "test_docs.py": "the README and the guides against the product",
    "test_fuzz.py": "Hypothesis against a server in a subprocess (bench/fuzz.py runs it long)",
    "test_jupyterhub.py": "a real JupyterHub and its proxy from npm",
    "test_real_agents.py": "Claude Code and Gemini CLI from npm",
    "test_real_adapters_probe.py": "Claude Code and Gemini CLI from npm, without our server",
    "test_fast_agent.py": "fast-agent, in a Python 3.12+ virtualenv of its own",
}

#: Workers per CPU for ``-n auto``: the tests mostly wait (for servers, kernels, agents and
#: Chromium), so more workers than CPUs is faster; measured on 2 CPUs.
WORKERS_PER_CPU = 2


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """How many pytest-xdist workers ``-n auto`` starts: ``WORKERS_PER_CPU`` per CPU this
    process may use, unless ``PYTEST_XDIST_AUTO_NUM_WORKERS`` says otherwise."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return int(os.environ["PYTEST_XDIST_AUTO_NUM_WORKERS"])
    return WORKERS_PER_CPU * len(os.sched_getaffinity(0))


def pytest_configure(config: pytest.Config) -> None:
    """The ``shared_kernel`` mark: the test's kernel sessions attach to one real IPython kernel
    per test process instead of launching their own (tests/kernels.py). For tests that need a
    session's tool registration and never talk to its kernel."""
    config.addinivalue_line(
        "markers",
        "shared_kernel: kernel sessions attach to one kernel per test process (tests/kernels.py)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests of the modules in ``ONCE``; a name there that is no test module is an
    error, so that a renamed module is not silently run on every Python again."""
    here = Path(__file__).parent
    missing = sorted(name for name in ONCE if not (here / name).is_file())
    if missing:
        raise pytest.UsageError(f"tests/conftest.py ONCE names missing modules: {missing}")
    for item in items:
        if item.path.name in ONCE and item.path.parent == here:
            item.add_marker(pytest.mark.once)


def make_notebook(root: Path, name: str, sources: list[str], language: str = "python") -> Path:
    """Write a real notebook with one code cell per source and a python3 kernelspec."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": language,
    }
    nb.metadata["language_info"] = {"name": language}
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


def load_json(name: str) -> Any:
    """A JSON file from ``tests/data``."""
    return json.loads((DATA / name).read_text(encoding="utf-8"))
