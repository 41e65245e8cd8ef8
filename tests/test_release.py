"""The release names and the one version: the Python package, the lab extension's
package.json (source and build) and the installed distribution's metadata agree
(CONTRIBUTING.md, Releasing)."""

from __future__ import annotations

import json
import sys
from importlib import metadata
from pathlib import Path

from packaging.version import Version

import jupyter_copilot
from jupyter_copilot._version import DISTRIBUTION

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent
SOURCE_PACKAGE = REPO / "labextension" / "package.json"
BUILT_PACKAGE = Path(jupyter_copilot.__file__).parent / "labextension" / "package.json"


def test_one_version_for_package_lab_extension_and_metadata() -> None:
    source = json.loads(SOURCE_PACKAGE.read_text())["version"]
    built = json.loads(BUILT_PACKAGE.read_text())["version"]
    installed = metadata.version(DISTRIBUTION)
    assert Version(jupyter_copilot.__version__) == Version(source)
    assert Version(built) == Version(source), "the built lab extension is of another version"
    assert Version(installed) == Version(source), "the installed metadata is of another version"


def test_pyproject_takes_the_version_from_the_lab_extension() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" in project["project"]["dynamic"]
    assert "version" not in project["project"]
    assert project["tool"]["hatch"]["version"]["path"] == "labextension/package.json"


def test_distribution_and_lab_extension_share_our_own_name() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    lab = json.loads(SOURCE_PACKAGE.read_text())
    assert project["project"]["name"] == DISTRIBUTION == "jupyterlab-agent-review"
    assert lab["name"] == DISTRIBUTION
    assert json.loads(BUILT_PACKAGE.read_text())["name"] == DISTRIBUTION
    # Where the wheel installs the built extension, and where the paths hook points.
    shared = project["tool"]["hatch"]["build"]["targets"]["wheel"]["shared-data"]
    assert shared["jupyter_copilot/labextension"] == f"share/jupyter/labextensions/{DISTRIBUTION}"
    assert jupyter_copilot._jupyter_labextension_paths() == [
        {"src": "labextension", "dest": DISTRIBUTION}
    ]
    # The import name and the server extension stay jupyter_copilot.
    modules = jupyter_copilot._jupyter_server_extension_points()
    assert [m["module"] for m in modules] == ["jupyter_copilot"]


def test_license_is_bsd_3_clause_everywhere() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    lab = json.loads(SOURCE_PACKAGE.read_text())
    assert project["project"]["license"] == lab["license"] == "BSD-3-Clause"
    assert (REPO / "LICENSE").read_text().startswith("BSD 3-Clause License")
    assert metadata.metadata(DISTRIBUTION)["License-Expression"] == "BSD-3-Clause"
