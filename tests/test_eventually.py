"""``eventually()``, the tests' one polling helper."""

from __future__ import annotations

import time

import pytest

from tests.eventually import eventually, eventually_blocking


async def test_it_returns_the_first_truthy_value_of_a_plain_or_async_condition() -> None:
    calls: list[int] = []

    def plain() -> list[int]:
        calls.append(1)
        return calls if len(calls) == 3 else []

    assert await eventually(plain, "three calls", timeout=5, interval=0.01) == [1, 1, 1]

    async def later() -> str:
        return "done"

    assert await eventually(later, "an async answer", timeout=5) == "done"


async def test_a_timeout_says_what_was_awaited_and_what_the_condition_last_gave() -> None:
    started = time.monotonic()
    with pytest.raises(AssertionError) as failure:
        await eventually(lambda: 0, "the answer", timeout=0.2, interval=0.01)
    assert time.monotonic() - started < 5
    assert str(failure.value) == "timed out after 0.2 s waiting for the answer (it last gave 0)"


async def test_ignored_exceptions_mean_not_yet_and_are_chained_to_the_failure() -> None:
    attempts: list[int] = []

    def flaky() -> bool:
        attempts.append(1)
        if len(attempts) < 3:
            raise ConnectionError("refused")
        return True

    assert await eventually(flaky, "a connection", ignoring=(ConnectionError,), interval=0.01)

    def refused() -> bool:
        raise ConnectionError("still refused")

    with pytest.raises(AssertionError, match=r"ConnectionError: still refused\)$") as failure:
        await eventually(refused, "a connection", 0.1, ignoring=(ConnectionError,), interval=0.01)
    assert isinstance(failure.value.__cause__, ConnectionError)


async def test_any_other_exception_ends_the_wait_at_once() -> None:
    def broken() -> bool:
        raise RuntimeError("the server exited")

    started = time.monotonic()
    with pytest.raises(RuntimeError, match="the server exited"):
        await eventually(broken, "the server", timeout=30, ignoring=(ConnectionError,))
    assert time.monotonic() - started < 5


def test_the_blocking_form_runs_on_a_loop_of_its_own() -> None:
    seen: list[int] = []
    assert eventually_blocking(lambda: seen.append(1) or len(seen) >= 2, "two calls", 5) is True
    with pytest.raises(AssertionError, match="waiting for nothing"):
        eventually_blocking(lambda: None, "nothing", 0.1)
