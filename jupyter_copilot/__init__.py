"""jupyter-copilot: safe, reviewable AI agent tools for live JupyterLab notebooks."""

from typing import Any

from ._version import __version__


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    from .server.app import CopilotApp

    return [{"module": "jupyter_copilot", "app": CopilotApp}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "jupyterlab-agent-review"}]


__all__ = ["__version__"]
