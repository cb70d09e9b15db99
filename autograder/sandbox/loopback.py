"""The loopback traffic of a sandboxed worker's network namespace, read by the grader from outside the worker.

The sandbox gives the worker a network namespace of its own (bubblewrap's ``--unshare-net``: ``lo`` and nothing
else) and no way out of it: no capability, and no further user namespace (``--disable-userns``), so neither the
worker nor anything it starts can make or enter another. Every process in the sandbox therefore sends on the same
``lo``, and its counters (``/proc/<pid>/net/dev`` of any process in the namespace) only grow: no process in the
namespace can lower them. The grader reads them through the first process of the sandbox that is in that namespace
(bubblewrap's init, pid 1 inside, which the student's code can neither signal nor move), held by a pidfd so that a
reused process number is never read.

:func:`sent` returns ``None`` where the worker shares the grader's network (the fallback sandbox, ``--no-sandbox``,
grading in one process): the grader's own traffic would be counted there, so the reading is no evidence.
"""

import os
import select
from dataclasses import dataclass

from autograder.sandbox.processes import parent_of, parents


@dataclass(frozen=True)
class Loopback:
    """What ``lo`` has sent so far: bytes and packets (each packet is counted once, sent and received alike)."""

    bytes: int
    packets: int

    def __sub__(self, other):
        return Loopback(self.bytes - other.bytes, self.packets - other.packets)


def _namespace(pid):
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


def _lo(pid):
    try:
        with open(f"/proc/{pid}/net/dev", encoding="ascii") as handle:
            for line in handle:
                name, _, counters = line.partition(":")
                if name.strip() == "lo":
                    fields = counters.split()
                    return Loopback(int(fields[8]), int(fields[9]))     # transmit bytes, transmit packets
    except (OSError, ValueError, IndexError):
        return None
    return None


def _member(root):
    """``(pid, pidfd)`` of the nearest descendant of ``root`` in a network namespace other than the grader's, or
    ``None``."""
    own = _namespace("self")
    if own is None:
        return None
    family = parents()
    level = [root]
    while level:
        children = sorted(pid for pid, parent in family.items() if parent in level)
        for pid in children:
            namespace = _namespace(pid)
            if namespace is not None and namespace != own:
                try:
                    fd = os.pidfd_open(pid)
                except OSError:
                    continue
                if parent_of(pid) in level:     # not a number reused between the scan and pidfd_open
                    return pid, fd
                os.close(fd)
        level = children
    return None


def _alive(fd):
    return not select.select([fd], [], [], 0)[0]     # a pidfd reads ready once its process has exited


def sent(proc):
    """What the sandbox of ``proc`` (the worker's ``Popen``) has sent on its own loopback so far, or ``None`` where
    it has no network namespace of its own (or it is gone)."""
    member = getattr(proc, "loopback_member", None)
    if member is None:
        if proc.poll() is not None:
            return None
        member = _member(proc.pid)
        if member is None:        # none yet (a sandbox still starting), or none at all: looked for again next time
            return None
        proc.loopback_member = member
    pid, fd = member
    if pid is None or not _alive(fd):
        return None
    reading = _lo(pid)
    return reading if _alive(fd) else None


def sent_by_worker_of(obj):
    """:func:`sent` for the worker holding ``obj`` (a student's object as the grader sees it), or ``None`` when
    ``obj`` lives in this process."""
    from autograder.seam.remote import is_remote

    if not is_remote(obj):
        return None
    session = object.__getattribute__(obj, "_session")
    return None if session.lost else sent(session.proc)
