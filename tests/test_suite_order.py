"""The order in which pytest-xdist's workers meet the tests (tests/fixtures/order.py)."""

from __future__ import annotations

from dataclasses import dataclass

from tests.fixtures.order import LONG, TOGETHER, spread_long_tests


@dataclass
class Item:
    """What ``spread_long_tests`` reads of a pytest item."""

    nodeid: str


def shares(items: list[Item], workers: int) -> list[list[str]]:
    """The node ids each worker is first handed, as pytest-xdist's ``worksteal`` splits."""
    out, start = [], 0
    for w in range(workers):
        size = (len(items) - start) // (workers - w)
        out.append([i.nodeid for i in items[start : start + size]])
        start += size
    return out


def collection() -> list[Item]:
    """A collection in file order: plain tests around the long ones and two hub tests."""
    plain = [Item(f"tests/test_plain_{n}.py::test_it") for n in range(40)]
    hub = [Item(f"{TOGETHER[0]}test_{n}") for n in range(5)]
    long = [Item(f"{prefix}x") for prefix in LONG[:6] if not prefix.startswith(TOGETHER)]
    return plain[:10] + hub[:2] + long[:3] + plain[10:30] + hub[2:] + long[3:] + plain[30:]


def test_every_test_stays_once_and_the_long_ones_start_each_workers_share() -> None:
    items = collection()
    before = sorted(i.nodeid for i in items)
    spread_long_tests(items, 4)  # type: ignore[arg-type]
    assert sorted(i.nodeid for i in items) == before
    firsts = [share[0] for share in shares(items, 4)]
    assert all(not first.startswith("tests/test_plain_") for first in firsts), firsts


def test_the_hub_tests_run_together_in_one_workers_share() -> None:
    items = collection()
    spread_long_tests(items, 4)  # type: ignore[arg-type]
    holding = [
        n for n, share in enumerate(shares(items, 4)) if any(TOGETHER[0] in i for i in share)
    ]
    assert len(holding) == 1, holding
    share = shares(items, 4)[holding[0]]
    hub = [n for n, nodeid in enumerate(share) if nodeid.startswith(TOGETHER[0])]
    assert hub == list(range(hub[0], hub[0] + 5))


def test_one_process_keeps_the_collection_order() -> None:
    items = collection()
    before = [i.nodeid for i in items]
    spread_long_tests(items, 0)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == before
