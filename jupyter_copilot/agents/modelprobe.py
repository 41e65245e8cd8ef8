"""Whether each configured model endpoint answers, asked before the person types.

The Agent menu lists the model agents of ``CopilotApp.models`` (docs/admin.md, "Models").
An endpoint that does not answer (nothing listens, the host is unknown, it hangs) would only
show its failure after the person wrote a message; so each listing of the agents first asks
every endpoint that has a ``base_url`` whether it answers, at most once per
:data:`FRESH_SECONDS` each and for at most :data:`PROBE_SECONDS`, all at once. Any HTTP
answer counts, whatever its status: the endpoint is there, and what it says of a key or a
model shows in the conversation in plain words. The probe sends no key and no content.
Endpoints without a ``base_url`` are a provider's own public API and are not asked.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from tornado.httpclient import AsyncHTTPClient, HTTPClientError

from .catalog import AgentSpec

#: The variable of a model agent's environment that holds its endpoint (agents/models.py).
BASE_URL_ENV = "COPILOT_MODEL_BASE_URL"
#: How long one probe may take before the endpoint counts as not answering.
PROBE_SECONDS = 2.0
#: How long an answer stays true before the endpoint is asked again.
FRESH_SECONDS = 30.0
#: What the Agent menu says of a model whose endpoint does not answer.
NOT_ANSWERING = (
    "Not answering: its endpoint did not answer just now. Try again later, or ask your "
    "administrator."
)

#: Fetch a URL; True when any HTTP answer came within the time limit.
Fetch = Callable[[str, float], Awaitable[bool]]


async def answers(url: str, timeout: float) -> bool:
    """Whether ``url`` gives any HTTP answer within ``timeout`` seconds (a GET, no body)."""
    try:
        await AsyncHTTPClient().fetch(
            url, method="GET", connect_timeout=timeout, request_timeout=timeout, raise_error=True
        )
    except HTTPClientError as e:
        # 599 is tornado's own code for no answer (refused, unknown host, timeout).
        return e.code != 599
    except (OSError, asyncio.TimeoutError):
        return False
    return True


@dataclass
class _Seen:
    answered: bool
    at: float


class ModelProbes:
    """The last answer of each model endpoint, asked again when older than ``fresh``."""

    def __init__(
        self,
        fetch: Fetch = answers,
        clock: Callable[[], float] = time.monotonic,
        timeout: float = PROBE_SECONDS,
        fresh: float = FRESH_SECONDS,
    ) -> None:
        self._fetch = fetch
        self._clock = clock
        self._timeout = timeout
        self._fresh = fresh
        self._seen: dict[str, _Seen] = {}

    @staticmethod
    def endpoint(spec: AgentSpec) -> str | None:
        """The endpoint a model agent would call, or None for any other agent."""
        url = spec.env.get(BASE_URL_ENV) if spec.kind == "model" else None
        return url if isinstance(url, str) else None

    async def refresh(self, specs: Iterable[AgentSpec]) -> None:
        """Ask every endpoint of ``specs`` whose last answer is stale, all at once."""
        now = self._clock()
        stale = {
            url
            for url in map(self.endpoint, specs)
            if url is not None and (url not in self._seen or now - self._seen[url].at > self._fresh)
        }
        if not stale:
            return
        urls = sorted(stale)
        results = await asyncio.gather(*(self._ask(url) for url in urls))
        for url, answered in zip(urls, results, strict=True):
            self._seen[url] = _Seen(answered, self._clock())

    def reason(self, spec: AgentSpec) -> str | None:
        """Why the Agent menu should warn of ``spec`` now, or None."""
        url = self.endpoint(spec)
        seen = self._seen.get(url) if url is not None else None
        return NOT_ANSWERING if seen is not None and not seen.answered else None

    async def _ask(self, url: str) -> bool:
        try:
            return await asyncio.wait_for(self._fetch(url, self._timeout), self._timeout + 1)
        except asyncio.TimeoutError:
            return False
