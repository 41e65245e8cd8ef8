"""The seccomp filter agents run under: a classic BPF program, built here without libseccomp.

The program answers ``EPERM`` to the system calls that could loosen the sandbox or reach
past it (mounting, tracing other processes, the kernel keyring, loading kernel code, joining
or creating namespaces, ``io_uring``, which bypasses this filter for the calls it queues)
and allows every other call. A call made through another ABI than the machine's own (32-bit
calls on x86-64, x32) is refused whole, since its numbers differ. See docs/security.md,
"The sandbox".

Pure: :func:`program` returns the bytes that bubblewrap's ``--seccomp`` reads.
"""

from __future__ import annotations

import errno
import platform
import struct

# Classic BPF opcodes (linux/filter.h, linux/bpf_common.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_RET_K = 0x06

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000

#: Offsets in ``struct seccomp_data``.
_NR = 0
_ARCH = 4

#: The x32 ABI marks its system call numbers with this bit.
_X32_BIT = 0x40000000

#: Per machine: the audit architecture and the numbers of the refused calls.
_DENIED: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        {
            "ptrace": 101,
            "syslog": 103,
            "pivot_root": 155,
            "acct": 163,
            "mount": 165,
            "umount2": 166,
            "swapon": 167,
            "swapoff": 168,
            "reboot": 169,
            "iopl": 172,
            "ioperm": 173,
            "init_module": 175,
            "delete_module": 176,
            "quotactl": 179,
            "kexec_load": 246,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "unshare": 272,
            "perf_event_open": 298,
            "name_to_handle_at": 303,
            "open_by_handle_at": 304,
            "setns": 308,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "finit_module": 313,
            "kexec_file_load": 320,
            "bpf": 321,
            "userfaultfd": 323,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "umount2": 39,
            "mount": 40,
            "pivot_root": 41,
            "quotactl": 60,
            "acct": 89,
            "unshare": 97,
            "kexec_load": 104,
            "init_module": 105,
            "delete_module": 106,
            "syslog": 116,
            "ptrace": 117,
            "reboot": 142,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "swapon": 224,
            "swapoff": 225,
            "perf_event_open": 241,
            "name_to_handle_at": 264,
            "open_by_handle_at": 265,
            "setns": 268,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "finit_module": 273,
            "bpf": 280,
            "userfaultfd": 282,
            "kexec_file_load": 294,
        },
    ),
}

#: Calls with the same number on every architecture since Linux 5.1.
_COMMON = {
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "open_tree": 428,
    "move_mount": 429,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "mount_setattr": 442,
}


def machine() -> str:
    """This machine's architecture as the filter names it (``x86_64``, ``aarch64``...)."""
    name = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(name, name)


def supported(arch: str | None = None) -> bool:
    """Whether a filter can be built for ``arch`` (this machine by default)."""
    return (arch or machine()) in _DENIED


def denied_calls(arch: str | None = None) -> dict[str, int]:
    """The refused system calls of ``arch`` by name."""
    _, numbers = _DENIED[arch or machine()]
    return {**numbers, **_COMMON}


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(arch: str | None = None) -> bytes:
    """The filter for ``arch`` (this machine by default) as ``struct sock_filter`` bytes.

    Raises ``KeyError`` for an architecture with no table here.
    """
    arch = arch or machine()
    audit_arch, _ = _DENIED[arch]
    numbers = sorted(set(denied_calls(arch).values()))
    deny = _RET_ERRNO | errno.EPERM
    out: list[bytes] = []
    # Another ABI than the machine's own: refuse the call.
    out.append(_insn(_LD_W_ABS, 0, 0, _ARCH))
    out.append(_insn(_JEQ_K, 1, 0, audit_arch))
    out.append(_insn(_RET_K, 0, 0, deny))
    out.append(_insn(_LD_W_ABS, 0, 0, _NR))
    if arch == "x86_64":
        out.append(_insn(_JGE_K, len(numbers) + 1, 0, _X32_BIT))
    for i, number in enumerate(numbers):
        # A match jumps to the refusal after the allow.
        out.append(_insn(_JEQ_K, len(numbers) - i, 0, number))
    out.append(_insn(_RET_K, 0, 0, _RET_ALLOW))
    out.append(_insn(_RET_K, 0, 0, deny))
    return b"".join(out)
