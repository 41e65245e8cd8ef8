"""People's own keys for the administrator's model endpoints (``allow_personal_models``).

A person may store their own key for a ``models`` entry; the model agent of their own
conversations then uses it instead of the administrator's. A key is kept on the server only:
one file per person, mode 0600 in a folder of mode 0700 under the Jupyter data directory,
named by a hash of the person's name. It is never sent back to the browser (the panel learns
only whether a key is set), never logged, never put in an event or in the conversation store,
and it reaches only the environment of that person's model agent (docs/admin.md, "Personal
keys").
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from collections.abc import Iterable
from logging import Logger
from typing import Any

from ..protocol.refusals import Refusal
from .catalog import AgentSpec

#: What a key may look like: printable ASCII without spaces, so that it can travel in an HTTP
#: header without being able to add one.
KEY_PATTERN = re.compile(r"[\x21-\x7e]{1,4096}")

#: The providers that take no key: a local Ollama.
KEYLESS_PROVIDERS = frozenset({"ollama"})


def takes_personal_key(spec: AgentSpec) -> bool:
    """Whether a person may bring their own key for this agent: a model endpoint that can
    start and whose provider takes a key."""
    return (
        spec.kind == "model"
        and spec.unavailable is None
        and spec.env.get("COPILOT_MODEL_PROVIDER") not in KEYLESS_PROVIDERS
    )


def checked_key(body: Any) -> str:
    """The key of a ``PUT`` body ``{"key": str}``; refusals never quote it."""
    if not isinstance(body, dict) or set(body) != {"key"}:
        raise Refusal("invalid-input", 'The body must be {"key": "<your key>"}.')
    key = body["key"]
    if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
        raise Refusal(
            "invalid-input",
            "A key is 1 to 4096 printable characters without spaces or line breaks.",
        )
    return key


class PersonalKeys:
    """Each person's keys, by model id. ``directory`` None keeps them in memory only (a
    server whose conversation store is off keeps nothing on disk either)."""

    def __init__(self, directory: str | None, log: Logger) -> None:
        self.directory = directory
        self.log = log
        self._memory: dict[str, dict[str, str]] = {}

    def _path(self, owner: str) -> str:
        assert self.directory is not None
        name = hashlib.sha256(owner.encode("utf-8")).hexdigest()
        return os.path.join(self.directory, f"{name}.json")

    def _read(self, owner: str) -> dict[str, str]:
        if self.directory is None:
            return dict(self._memory.get(owner, {}))
        try:
            with open(self._path(owner), encoding="utf-8") as f:
                keys = json.load(f)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            # Never the file's content or path: a person's name is in neither, but a key is.
            self.log.warning("jupyter-copilot: a personal key file could not be read")
            return {}
        if not isinstance(keys, dict):
            return {}
        return {k: v for k, v in keys.items() if isinstance(k, str) and isinstance(v, str)}

    def _write(self, owner: str, keys: dict[str, str]) -> None:
        if self.directory is None:
            self._memory[owner] = dict(keys)
            return
        os.makedirs(self.directory, mode=0o700, exist_ok=True)
        os.chmod(self.directory, 0o700)
        path = self._path(owner)
        if not keys:
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
            return
        # Written whole to a private temporary file, then renamed over the old one: no
        # moment in which the key is readable by anyone else or half written.
        fd, temporary = tempfile.mkstemp(dir=self.directory, prefix=".key-")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(keys, f)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.remove(temporary)
            raise

    def key(self, owner: str, model_id: str) -> str | None:
        """The person's key for that model, if they set one."""
        return self._read(owner).get(model_id)

    def set(self, owner: str, model_id: str, key: str) -> None:
        """Store or replace the person's key for that model."""
        keys = self._read(owner)
        keys[model_id] = key
        self._write(owner, keys)

    def remove(self, owner: str, model_id: str) -> None:
        """Forget the person's key for that model (nothing if there was none)."""
        keys = self._read(owner)
        if keys.pop(model_id, None) is not None:
            self._write(owner, keys)

    def listing(self, owner: str, models: Iterable[AgentSpec]) -> list[dict[str, Any]]:
        """What the panel shows: each model with whether the person set a key, never a key."""
        keys = self._read(owner)
        return [{"id": s.id, "label": s.label, "keySet": s.id in keys} for s in models]
