"""The package version: the one in labextension/package.json, which the build puts in the
distribution's metadata (pyproject.toml, ``[tool.hatch.version]``)."""

import json
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

#: The distribution's name on the package index; the import name stays ``jupyter_copilot``.
DISTRIBUTION = "jupyterlab-agent-review"


def _version() -> str:
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        # Not installed (a checkout on sys.path): the built lab extension, else its source.
        here = Path(__file__).resolve().parent
        for package_json in (here / "labextension", here.parent / "labextension"):
            try:
                return str(json.loads((package_json / "package.json").read_text())["version"])
            except (OSError, ValueError, KeyError):
                continue
        return "0+unknown"


__version__ = _version()
