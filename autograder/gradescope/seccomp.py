"""Seccomp filters assembled by hand: no network socket for the fallback sandbox, no namespaces for the test's Docker.

Where bubblewrap cannot make a network namespace (Docker's default seccomp profile refuses new namespaces), the
fallback sandbox still keeps the worker off the network: :func:`deny_network` refuses ``socket()`` for every family
but ``AF_UNIX`` (``EAFNOSUPPORT``), ``io_uring_setup`` (whose ``IORING_OP_SOCKET`` would make a socket without the
``socket`` system call), and ``ptrace`` / ``process_vm_readv`` / ``process_vm_writev`` (the worker may not reach into
another process of its user). :func:`deny_namespaces` is what Docker's default profile does to a process without
``CAP_SYS_ADMIN``: ``clone``/``unshare`` with any ``CLONE_NEW*`` flag, ``setns`` and ``mount`` fail with ``EPERM``,
``clone3`` with ``ENOSYS`` (so glibc falls back to ``clone``, whose flags a filter can read). The test's outer sandbox
uses it to make a machine where bubblewrap fails as it does in Gradescope's container.

A filter is a classic BPF program over ``struct seccomp_data`` (``nr`` at offset 0, ``arch`` at 4, ``args[i]`` at
16 + 8 i), x86_64 only: any other architecture, and x32 system calls, are refused. This file also runs as a script,
``python -I -S seccomp.py deny-network -- ARGV``: it installs the filter (``PR_SET_NO_NEW_PRIVS`` first, as the kernel
requires of a process without ``CAP_SYS_ADMIN``) and execs ARGV, which keeps it across ``execve``. So it imports
nothing but the standard library. ``program_bytes(name)`` gives a filter as bytes for ``bwrap --seccomp FD``.
"""

import ctypes
import errno
import os
import platform
import struct
import sys

# BPF instruction classes and fields (linux/bpf_common.h)
LD_W_ABS = 0x20          # BPF_LD | BPF_W | BPF_ABS: A = 32-bit word at offset k of seccomp_data
JEQ = 0x15               # BPF_JMP | BPF_JEQ | BPF_K
JGE = 0x35               # BPF_JMP | BPF_JGE | BPF_K
JSET = 0x45              # BPF_JMP | BPF_JSET | BPF_K: jump if A & k
RET = 0x06               # BPF_RET | BPF_K

RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000   # | errno

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0 = 0, 4, 16   # args[0], low 32 bits (little endian)

# x86_64 system call numbers (arch/x86/entry/syscalls/syscall_64.tbl)
NR = {"socket": 41, "clone": 56, "ptrace": 101, "mount": 165, "unshare": 272, "setns": 308,
      "process_vm_readv": 310, "process_vm_writev": 311, "io_uring_setup": 425, "clone3": 435}
AF_UNIX = 1
CLONE_NEW_ANY = 0x7E020080   # NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2


def instruction(code, k=0, jt=0, jf=0):
    """One ``struct sock_filter``: u16 code, u8 jt, u8 jf, u32 k."""
    return struct.pack("=HBBI", code, jt, jf, k)


def errno_return(number):
    return instruction(RET, RET_ERRNO | number)


def _prologue():
    """Kill on any architecture but x86_64; refuse x32 system calls (another numbering); leave ``nr`` in A."""
    return [instruction(LD_W_ABS, OFFSET_ARCH),
            instruction(JEQ, AUDIT_ARCH_X86_64, jt=1),
            instruction(RET, RET_KILL_PROCESS),
            instruction(LD_W_ABS, OFFSET_NR),
            instruction(JGE, X32_SYSCALL_BIT, jf=1),
            errno_return(errno.EPERM)]


def _refuse(name, number):
    """``if nr == name: return -number`` (A holds nr and keeps it)."""
    return [instruction(JEQ, NR[name], jf=1), errno_return(number)]


def _when_flags(name, mask, number):
    """``if nr == name and args[0] & mask: return -number`` (A is nr again afterwards)."""
    return [instruction(JEQ, NR[name], jf=4),
            instruction(LD_W_ABS, OFFSET_ARG0),
            instruction(JSET, mask, jf=1),
            errno_return(number),
            instruction(LD_W_ABS, OFFSET_NR)]


def deny_network():
    """``socket()`` only for ``AF_UNIX``; no io_uring; no reaching into another process's memory."""
    socket_rule = [instruction(JEQ, NR["socket"], jf=4),
                   instruction(LD_W_ABS, OFFSET_ARG0),
                   instruction(JEQ, AF_UNIX, jf=1),
                   instruction(RET, RET_ALLOW),
                   errno_return(errno.EAFNOSUPPORT)]
    rules = [*_prologue(), *socket_rule, *_refuse("io_uring_setup", errno.ENOSYS)]
    for name in ("ptrace", "process_vm_readv", "process_vm_writev"):
        rules += _refuse(name, errno.EPERM)
    return b"".join(rules + [instruction(RET, RET_ALLOW)])


def deny_namespaces():
    """Docker's default profile for a process without ``CAP_SYS_ADMIN``, as far as namespaces go."""
    rules = [*_prologue(), *_when_flags("clone", CLONE_NEW_ANY, errno.EPERM),
             *_when_flags("unshare", CLONE_NEW_ANY, errno.EPERM), *_refuse("clone3", errno.ENOSYS),
             *_refuse("setns", errno.EPERM), *_refuse("mount", errno.EPERM)]
    return b"".join(rules + [instruction(RET, RET_ALLOW)])


PROGRAMS = {"deny-network": deny_network, "deny-namespaces": deny_namespaces}


def supported():
    """Whether these filters fit this machine (x86_64 Linux); elsewhere the fallback says the network is open."""
    return sys.platform == "linux" and platform.machine() in ("x86_64", "AMD64")


def program_bytes(name):
    return PROGRAMS[name]()


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(program):
    """Install ``program`` (bytes of sock_filter) on this thread, after ``PR_SET_NO_NEW_PRIVS``; raises OSError."""
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    for args in ((PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0),
                 (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0)):
        if libc.prctl(*[ctypes.c_ulong(a) for a in args]) != 0:
            number = ctypes.get_errno()
            raise OSError(number, f"prctl{args[:2]}: {os.strerror(number)}")


def main(argv):
    """``seccomp.py NAME -- ARGV``: install filter NAME and exec ARGV (found on PATH)."""
    if len(argv) < 3 or argv[0] not in PROGRAMS or argv[1] != "--":
        sys.stderr.write(f"usage: seccomp.py {{{','.join(PROGRAMS)}}} -- ARGV\n")
        return 2
    install(program_bytes(argv[0]))
    os.execvp(argv[2], argv[2:])
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
