"""The seccomp filters, installed for real on this machine (x86_64): each system call they refuse, refused with the
errno they promise, and what they allow still working (an AF_UNIX socket, a plain fork). ``ptrace`` and
``process_vm_readv`` aim at pid -1 (without the filter: ESRCH, and nothing read), so the probe never stops a process."""

import json
import subprocess
import sys

import pytest

from autograder.gradescope import seccomp

pytestmark = pytest.mark.skipif(not seccomp.supported(), reason="the filters are x86_64 Linux only")

PROBE = r'''
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *args):
    ctypes.set_errno(0)
    result = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    return "ok" if result >= 0 else errno.errorcode.get(ctypes.get_errno())
print(json.dumps({
    "socket_inet": call(41, 2, 1, 0), "socket_inet6": call(41, 10, 1, 0), "socket_unix": call(41, 1, 1, 0),
    "socket_x32": call(0x40000000 | 41, 2, 1, 0), "io_uring_setup": call(425, 4, 0),
    "ptrace": call(101, 16, -1, 0, 0), "process_vm_readv": call(310, -1, 0, 0, 0, 0, 0),
    "unshare_user": call(272, 0x10000000), "unshare_net": call(272, 0x40000000), "clone3": call(435, 0, 0),
    "setns": call(308, -1, 0), "fork": "ok" if os.waitpid(os.fork() or os._exit(0), 0) else "?",
}))
'''


def probe(name):
    done = subprocess.run([sys.executable, "-I", "-S", seccomp.__file__, name, "--", sys.executable, "-I", "-c", PROBE],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def probe_without_filter():
    done = subprocess.run([sys.executable, "-I", "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.quick
def test_deny_network_leaves_only_unix_sockets():
    got = probe("deny-network")
    assert got["socket_inet"] == got["socket_inet6"] == "EAFNOSUPPORT"
    assert got["socket_unix"] == "ok" and got["fork"] == "ok"
    assert got["socket_x32"] == "EPERM" and got["io_uring_setup"] == "ENOSYS"
    assert got["ptrace"] == got["process_vm_readv"] == "EPERM"


@pytest.mark.quick
def test_the_probe_tells_refused_from_failed():
    """Without a filter the same calls fail otherwise (or succeed): the EPERMs above are the filter's."""
    got = probe_without_filter()
    assert got["ptrace"] == "ESRCH" and got["process_vm_readv"] != "EPERM" and got["socket_inet"] == "ok"
    assert got["io_uring_setup"] != "ENOSYS" and got["socket_x32"] != "EPERM"


@pytest.mark.quick
def test_deny_namespaces_is_dockers_refusal():
    got = probe("deny-namespaces")
    assert got["unshare_user"] == got["unshare_net"] == got["setns"] == "EPERM"
    assert got["clone3"] == "ENOSYS" and got["fork"] == "ok" and got["socket_inet"] == "ok"
