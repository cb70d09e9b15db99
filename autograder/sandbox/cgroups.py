"""The total memory of a sandbox's processes: a cgroup v2 of its own where the machine delegates one, else rlimits.

RLIMIT_DATA bounds the memory each process of a sandbox writes (8 GiB by default), RLIMIT_NPROC their number (512
processes and threads): the total is bounded only by their product, far above any machine, and memory a process maps
from a file or shares (``/dev/shm``, the sandbox's own 512 MiB tmpfs, is counted apart) escapes RLIMIT_DATA. A cgroup v2 with
``memory.max`` bounds every page of every process in it together, whatever they are. The grader may make one only
where the machine gives it a cgroup of its own with the memory controller delegated: ``delegation(root,
self_cgroup)`` decides that from the files alone (a pure function: the tests give it a fake tree), and
``memory_bound()`` says which bound a sandbox gets, for the record. The grader never writes into a cgroup it was
not given, and makes none where ``delegation`` says no (docs/sandbox.md).
"""

import os
import uuid

ROOT = "/sys/fs/cgroup"
SELF = "/proc/self/cgroup"


def _read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return None


def _owner(path):
    try:
        return os.stat(path).st_uid
    except OSError:
        return None


def delegation(root=ROOT, self_cgroup=SELF, uid=None):
    """``(directory, why)``: the cgroup v2 directory in which this process may make a child cgroup with the memory
    controller for each sandbox, or ``(None, why not)``.

    That directory is the parent of this process's own cgroup (a cgroup holding processes may not give its children
    controllers: the grader runs in a leaf, and the sandboxes' cgroups are its siblings). Yes only when all hold: the
    unified hierarchy is mounted at ``root`` (``cgroup.controllers`` there: cgroup v2 alone, not the hybrid layout
    whose memory controller is v1's); this process's cgroup (the ``0::`` line of ``self_cgroup``) is not the root
    and has ``memory`` among its controllers (so its parent has it enabled for its children: the grader changes no
    ``cgroup.subtree_control``); this user (``uid``, default the effective one) owns the parent directory and its
    ``cgroup.procs`` (what delegating a cgroup to a user does; a process moves between two cgroups only with write
    access to their common ancestor's). Never for root: root may write every cgroup of the machine, which belong to
    its manager (systemd, a container runtime); run the grader as a user with a delegated cgroup instead.
    """
    uid = os.geteuid() if uid is None else uid
    if uid == 0:
        return None, "the grader runs as root: the machine's cgroups belong to its manager, none is taken"
    if _read(os.path.join(root, "cgroup.controllers")) is None:
        return None, f"no cgroup v2 hierarchy at {root} (cgroup v1, or the hybrid layout)"
    lines = (_read(self_cgroup) or "").splitlines()
    path = next((line[3:].strip() for line in lines if line.startswith("0::")), None)
    if path is None:
        return None, f"this process has no cgroup v2 ({self_cgroup} has no 0:: line)"
    if path.strip("/") == "":
        return None, "this process is in the root cgroup (a machine's own processes; it delegates nothing)"
    own = os.path.join(root, path.lstrip("/"))
    parent = os.path.dirname(own.rstrip("/"))
    if "memory" not in (_read(os.path.join(own, "cgroup.controllers")) or "").split():
        return None, f"the memory controller is not enabled for {own} (its parent's cgroup.subtree_control)"
    if not all(_owner(path) == uid for path in (parent, os.path.join(parent, "cgroup.procs"))):
        return None, f"{parent} is not delegated to this user (uid {uid} does not own it and its cgroup.procs)"
    return parent, f"cgroup v2 delegated at {parent}"


def memory_bound(limit_bytes, root=ROOT, self_cgroup=SELF, uid=None):
    """``(parent or None, description)``: where a sandbox's cgroup is made, and what bounds its memory (the record's
    evidence says it)."""
    parent, why = delegation(root, self_cgroup, uid)
    if parent is not None and limit_bytes:
        return parent, f"cgroup v2: memory.max {limit_bytes / 2**30:g} GiB for all of the sandbox's processes ({why})"
    return None, ("rlimits: RLIMIT_DATA per process x RLIMIT_NPROC, no bound on the total "
                  f"({why if parent is None else 'no memory limit set'})")


def make(parent, limit_bytes):
    """A new child cgroup of ``parent`` with ``memory.max`` (and no swap): its directory."""
    path = os.path.join(parent, f"epl-sandbox-{uuid.uuid4().hex[:12]}")
    os.mkdir(path)
    for name, value in (("memory.max", str(int(limit_bytes))), ("memory.swap.max", "0"), ("memory.oom.group", "1")):
        try:
            with open(os.path.join(path, name), "w", encoding="utf-8") as handle:
                handle.write(value)
        except OSError:
            if name == "memory.max":
                os.rmdir(path)
                raise
    return path


def entering(path, argv):
    """``argv`` run by a shell that first moves itself into the cgroup at ``path`` (then ``exec``: every process the
    sandbox starts is born in it)."""
    return ["/bin/sh", "-c", 'echo 0 > "$0/cgroup.procs" && exec "$@"', path, *argv]


def remove(path):
    """Remove a sandbox's cgroup once its processes are gone (``sandbox.stop`` waited for them)."""
    if path:
        try:
            os.rmdir(path)
        except OSError:
            pass
