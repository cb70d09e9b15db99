"""A machine like Gradescope's container, made inside this one: root, and no namespace can be made.

``DockerLike`` runs a command as real root (no user namespace for this outer layer) under
``bwrap --dev-bind / / ... --seccomp FD``, whose filter (``seccomp.deny_namespaces``: what Docker's default profile does
to a process without ``CAP_SYS_ADMIN``) makes ``clone``/``unshare`` with any ``CLONE_NEW*`` flag fail with ``EPERM`` and
``clone3`` with ``ENOSYS``. So bubblewrap fails inside it as it does in Gradescope. The host is left as it was:
``/autograder``, ``/etc`` (a copy: setup.sh's ``useradd`` writes there) and ``/tmp`` are the test's own directories
bound over the real ones, and ``/root`` (mode 0700 here, holding this machine's pyenv Python) is an empty 0755 tmpfs
with only ``/root/.pyenv`` shown, read-only, so that an unprivileged user can run that Python.
"""

import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

from autograder.gradescope import seccomp

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# How often the peak memory is sampled. Reading smaps_rollup of every process (the kernel walks their page tables)
# costs about 15 ms of CPU a sample with torch loaded in three processes: every 0.1 s that was 1.5 s of each 13 s
# run_autograder, on a saturated machine. Every 0.5 s it is 0.3 s, and the peaks measured were the same (758 and
# 758 MB, 2026-11-25): a run's processes hold their peak for seconds (torch loaded, a check's tensors).
SAMPLE_S = 0.5


def copy_etc(dest):
    """A copy of /etc (3 MB here) that setup.sh's useradd may change; links kept as links, unreadable files skipped."""
    def ignore_unreadable(folder, names):
        return [n for n in names if not os.access(os.path.join(folder, n), os.R_OK)]
    shutil.copytree("/etc", dest, symlinks=True, ignore=ignore_unreadable, ignore_dangling_symlinks=True)
    return Path(dest)


class DockerLike:
    """``own_tmp=False``: the host's /tmp (the adversarial run's course lives in pytest's temporary directory).
    ``deny_namespaces=False``: no seccomp filter (the adversarial run forces the fallback itself, and ``grade_all``
    stops where bwrap fails: it only needs the fallback's user to reach this machine's Python under /root)."""

    def __init__(self, base, autograder=None, own_tmp=True, deny_namespaces=True):
        self.base = Path(base)
        self.etc = copy_etc(self.base / "etc")
        self.tmp = self.base / "tmp" if own_tmp else None
        if own_tmp:
            self.tmp.mkdir()
            os.chmod(self.tmp, 0o1777)
        self.autograder = autograder
        self.deny_namespaces = deny_namespaces
        self.program = self.base / "deny-namespaces.bpf"
        self.program.write_bytes(seccomp.program_bytes("deny-namespaces"))

    def argv(self, command, fd, env=()):
        binds = ["--bind", str(self.etc), "/etc"] + (["--bind", str(self.tmp), "/tmp"] if self.tmp else [])
        if self.autograder is not None:
            binds += ["--bind", str(self.autograder), "/autograder"]
        if os.path.isdir("/root/.pyenv"):
            binds += ["--perms", "0755", "--tmpfs", "/root", "--ro-bind", "/root/.pyenv", "/root/.pyenv"]
        seccomp_option = ["--seccomp", str(fd)] if self.deny_namespaces else []
        return ["bwrap", "--dev-bind", "/", "/", *binds, "--die-with-parent", *seccomp_option, "--",
                "/usr/bin/env", "-i", f"PATH={PATH}", "HOME=/root", "LANG=C.UTF-8", *env, *command]

    def run(self, command, timeout, sample_memory=False, env=(), cwd=None):
        """``(CompletedProcess, seconds, peak MB)``: ``command`` in the container; the peak is the largest sum of the
        proportional set sizes of every process below it (about what a container's memory limit counts, page cache
        aside), sampled every ``SAMPLE_S``."""
        with open(self.program, "rb") as program:
            started = time.perf_counter()
            proc = subprocess.Popen(self.argv(command, program.fileno(), env), pass_fds=(program.fileno(),), cwd=cwd,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    start_new_session=True)
            peak = [0.0]
            sampler = threading.Thread(target=_sample, args=(proc, peak), daemon=True) if sample_memory else None
            if sampler:
                sampler.start()
            try:
                out, _ = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                out, _ = proc.communicate()
                out += f"\n[killed by the test after {timeout} s]"
            seconds = time.perf_counter() - started
            if sampler:
                sampler.join()
        return subprocess.CompletedProcess(command, proc.returncode, out), seconds, peak[0]


def descendants(root):
    children = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as handle:
                    parent = int(handle.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def pss_mb(pid):
    """The process's proportional set size: its private memory plus its share of pages it shares with others (torch's
    libraries, loaded by the grader and each worker, count once over all of them, as a container's cgroup counts)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0.0


def _sample(proc, peak):
    while proc.poll() is None:
        peak[0] = max(peak[0], sum(pss_mb(pid) for pid in descendants(proc.pid)))
        time.sleep(SAMPLE_S)
