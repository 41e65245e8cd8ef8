"""The kernels that tests start take their ports from their test worker's own range
(tests/kernels.py), so that another worker cannot take a port between its choice and the
kernel binding it."""

from __future__ import annotations

import itertools
import socket
from pathlib import Path

from tests import kernels
from tests.conftest import make_notebook
from tests.server import start_session


def test_the_workers_shares_are_disjoint_and_below_the_ephemeral_range() -> None:
    end = kernels.ephemeral_start()
    shares = [kernels.KernelPorts(worker, 8, end) for worker in range(8)]
    ranges = [range(share.first, share.first + share.size) for share in shares]
    assert ranges[0].start == kernels.FIRST_KERNEL_PORT
    assert ranges[-1].stop <= end
    for before, after in itertools.pairwise(ranges):
        assert before.stop <= after.start


def test_the_ephemeral_range_is_read_from_the_system_with_linuxs_default_otherwise(
    tmp_path: Path,
) -> None:
    given = tmp_path / "ip_local_port_range"
    given.write_text("40000\t60999\n")
    assert kernels.ephemeral_start(given) == 40000
    assert kernels.ephemeral_start(tmp_path / "missing") == 32768


def test_a_share_hands_out_ports_in_turn_and_skips_a_port_held_by_anyone() -> None:
    # Relative checks only: a test worker's kernels may hold ports of this share meanwhile.
    share = kernels.KernelPorts(7, 8, kernels.ephemeral_start())
    first = share.take("127.0.0.1")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", first + 1))
        second = share.take("127.0.0.1")
    assert share.first <= first < share.first + share.size
    assert second >= first + 2
    ports = share.for_kernel("127.0.0.1")
    assert list(ports) == list(kernels.PORT_NAMES)
    values = list(ports.values())
    assert values == sorted(values) and len(set(values)) == 5 and values[0] > second


def test_no_share_is_made_for_a_worker_out_of_range_or_too_small() -> None:
    for worker, workers in ((8, 8), (-1, 8), (0, 10_000)):
        try:
            kernels.KernelPorts(worker, workers, 32768)
        except ValueError as error:
            assert "no kernel port range" in str(error)
        else:
            raise AssertionError(f"a share for worker {worker} of {workers}")


async def test_a_kernel_the_server_launches_binds_ports_of_this_workers_share(
    jp_fetch, jp_root_dir, jp_serverapp
) -> None:
    make_notebook(jp_root_dir, "a.ipynb", ["x = 1"])
    session = await start_session(jp_fetch, "a.ipynb")
    manager = jp_serverapp.kernel_manager.get_kernel(session["kernel"]["id"])
    assert isinstance(manager, kernels.WorkerPortKernelManager)
    info = manager.get_connection_info()
    share = kernels.KernelPorts.for_this_worker()
    for name in kernels.PORT_NAMES:
        assert share.first <= info[name] < share.first + share.size
    assert await kernels.kernel_implementation(info) == "ipython"
    # A restart keeps the kernel's ports.
    await jp_fetch("api", "kernels", session["kernel"]["id"], "restart", method="POST", body="")
    assert {name: manager.get_connection_info()[name] for name in kernels.PORT_NAMES} == {
        name: info[name] for name in kernels.PORT_NAMES
    }
