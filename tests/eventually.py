"""``eventually()``: the one way the tests wait for something to become true."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def eventually(
    condition: Callable[[], T | Awaitable[T]],
    description: str,
    timeout: float = 15.0,
    *,
    interval: float = 0.05,
    ignoring: tuple[type[BaseException], ...] = (),
) -> T:
    """Call ``condition`` (plain or async) until it gives something truthy; return that.

    ``description`` says what is awaited, for the failure: ``timed out after 15 s waiting for
    <description>``, with what the condition last gave. Exceptions of the ``ignoring`` types
    count as "not yet" (the last one is chained to the failure); any other one ends the wait
    at once, so a condition can give up early by raising.
    """
    deadline = time.monotonic() + timeout
    last: Any = None
    error: BaseException | None = None
    while True:
        try:
            value = condition()
            if inspect.isawaitable(value):
                value = await value
        except ignoring as e:
            value, error = None, e
        else:
            error = None
            if value:
                return value  # type: ignore[return-value]
        last = value
        if time.monotonic() >= deadline:
            detail = f"{type(error).__name__}: {error}" if error else f"it last gave {last!r}"
            raise AssertionError(
                f"timed out after {timeout:g} s waiting for {description} ({detail})"
            ) from error
        await asyncio.sleep(interval)


def eventually_blocking(
    condition: Callable[[], T | Awaitable[T]],
    description: str,
    timeout: float = 15.0,
    **options: Any,
) -> T:
    """:func:`eventually` from synchronous code (no event loop running in this thread), on a
    private loop that leaves the thread's current event loop alone."""
    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(eventually(condition, description, timeout, **options))
    finally:
        loop.close()
