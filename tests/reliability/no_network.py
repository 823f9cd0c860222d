"""Run a command that must not touch the network: `python no_network.py CMD ARGS...`

A seccomp filter (Linux, x86-64 or arm64) is installed in this process and
inherited by the command it then executes: creating any AF_INET or AF_INET6
socket kills the process at once with SIGSYS. That covers every way out of
the machine (TCP, UDP, DNS lookups) and every language in the process (Python,
libpq, cocoindex's Rust engine), not just Python's `socket` module. Unix
sockets (how the embedded PostgreSQL is reached) stay allowed.

So a command that exits normally under it has not tried to reach the network.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_KILL_PROCESS = 0x80000000
AF_INET, AF_INET6 = 2, 10
# machine -> (AUDIT_ARCH_*, number of the socket syscall)
ARCHES = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}

BPF_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
BPF_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
BPF_RET_K = 0x06  # BPF_RET | BPF_K
# offsets in struct seccomp_data
NR, ARCH, ARG0 = 0, 4, 16


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def install() -> None:
    arch, socket_nr = ARCHES[platform.machine()]
    program = [
        _insn(BPF_LD_W_ABS, 0, 0, ARCH),
        _insn(BPF_JEQ_K, 1, 0, arch),  # another ABI (x32, i386): refuse it all
        _insn(BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
        _insn(BPF_LD_W_ABS, 0, 0, NR),
        _insn(BPF_JEQ_K, 0, 3, socket_nr),  # not socket(): allow
        _insn(BPF_LD_W_ABS, 0, 0, ARG0),  # the address family
        _insn(BPF_JEQ_K, 2, 0, AF_INET),
        _insn(BPF_JEQ_K, 1, 0, AF_INET6),
        _insn(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
        _insn(BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
    ]
    code = ctypes.create_string_buffer(b"".join(program))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = SockFprog(len(program), ctypes.cast(code, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [
        ctypes.c_int,
        ctypes.c_ulong,
        ctypes.c_void_p,
        ctypes.c_ulong,
        ctypes.c_ulong,
    ]
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, None, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")


if __name__ == "__main__":
    install()
    os.execvp(sys.argv[1], sys.argv[1:])
