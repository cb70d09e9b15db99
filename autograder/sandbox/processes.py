"""Ending every process a worker started, and the supervisor that does it without a sandbox.

``end_family(pid)`` stops a process and all its descendants (``SIGSTOP`` through pidfds until no new one
appears, so none can fork away), then kills them. Without a sandbox (``--no-sandbox``) the worker runs under
``_supervise``, a child subreaper, so that processes it orphans (``setsid`` children, double-forked daemons)
stay in the family and end with it. This file also runs as a script (``python -I -S processes.py --supervise
ARGV``), so it imports nothing but the standard library.
"""

import os
import select
import signal
import sys
import time


def end_family(root, keep_root=False):
    """SIGSTOP ``root`` and its descendants until no new one appears, then SIGKILL them and wait."""
    members = {root: None if keep_root else _pidfd(root)}
    if members[root] is None and not keep_root:
        return
    _signal(members[root], signal.SIGSTOP)
    grew = True
    while grew:
        grew = False
        for pid, parent in parents().items():
            if parent in members and pid not in members:
                fd = _pidfd(pid)
                if fd is None:
                    continue
                if parent_of(pid) != parent:     # the number was reused between the scan and pidfd_open
                    os.close(fd)
                    continue
                _signal(fd, signal.SIGSTOP)
                members[pid] = fd
                grew = True
    fds = [fd for fd in members.values() if fd is not None]
    for fd in fds:
        _signal(fd, signal.SIGKILL)
    deadline = time.monotonic() + 10
    for fd in fds:   # a pidfd reads ready once its process has exited
        select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        os.close(fd)


def _pidfd(pid):
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        return None


def _signal(fd, signum):
    if fd is None:
        return
    try:
        signal.pidfd_send_signal(fd, signum)
    except (ProcessLookupError, PermissionError):   # gone; or a setuid program (only possible without a sandbox)
        pass


def parent_of(pid):
    """The parent process id of ``pid`` (from ``/proc``), or ``None`` when it is gone or cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return int(handle.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def parents():
    """``{pid: parent pid}`` of every process this one can see."""
    found = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            parent = parent_of(name)
            if parent is not None:
                found[int(name)] = parent
    return found


def close_quietly(stream):
    if stream is not None:
        try:
            stream.close()
        except OSError:
            pass


def _supervise(argv):
    """Run ``argv`` as a child; when it ends (or the grader does), end every process it started.

    A child subreaper: orphans of the family become its children instead of init's, so
    ``_end_family`` finds them. Runs as ``python -I -S processes.py --supervise ARGV``.
    """
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)                     # PR_SET_CHILD_SUBREAPER
    libc.prctl(1, signal.SIGTERM, 0, 0, 0)         # PR_SET_PDEATHSIG: the grader died

    def end(signum, frame):
        end_family(os.getpid(), keep_root=True)
        os._exit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, end)
    with open("/proc/self/environ", "rb") as handle:   # as given: os.environ gained LC_CTYPE (PEP 538)
        env = dict(item.split(b"=", 1) for item in handle.read().split(b"\0") if item)
    child = os.fork()
    if child == 0:
        try:
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    null = os.open(os.devnull, os.O_RDWR)          # the pipes close when the child's copies do
    os.dup2(null, 0)
    os.dup2(null, 1)
    code = 1
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            end_family(os.getpid(), keep_root=True)
    sys.exit(128 - code if code < 0 else code)


if __name__ == "__main__" and sys.argv[1:2] == ["--supervise"]:
    _supervise(sys.argv[2:])
