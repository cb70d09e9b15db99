"""The sandbox a student's code runs in: bubblewrap namespaces, a read-only view of Python, rlimits.

``start(argv, scratch=...)`` runs ``argv`` (the worker) with no network (its own network namespace:
only ``lo``), its own PID namespace (it cannot see or signal the grader), a read-only view of only
the system directories, the Python installation and the student kit's ``autograder`` package (``kit_tree``: no
oracle, no course tool, wherever the grader's own copy lies), one writable scratch
directory at the same path as outside (also HOME and TMPDIR), an empty environment, uid 65534 and
resource limits. ``stop(proc)`` ends it and every process it started, setsid or not.

Who runs the grader decides the path (both measured on Debian 12, kernel 6.18, bwrap 0.8.0):

- an ordinary user: one bwrap with a user namespace (``--unshare-user --uid 65534``); outside, the
  sandbox is that user.
- root: a bwrap run by root would map the sandbox to root outside, and a bwrap run as 65534 cannot
  open an interpreter under /root (mode 0700). So bwrap makes the mounts as root, setpriv drops to
  uid 65534 with no capabilities, and a second bwrap makes the user namespace: the sandbox is 65534
  outside too, counts its processes on its own, and cannot make further user namespaces.

Where no sandbox can be made, ``probe()`` raises :class:`SandboxUnavailable` saying what to do.
``sandboxed=False`` (``--no-sandbox``, for a trusted machine) keeps the empty environment, the
limits and the ending of every process, without namespaces. docs/sandbox.md has the details.

``fallback_command`` / ``start_fallback``: where no namespace can be made at all (Docker's default seccomp profile, as
in Gradescope's container) and the grader is root, the worker runs as a dedicated unprivileged user instead, under a
supervisor that stays root (so the worker cannot kill it and orphans stay in the family), with the same empty
environment and limits; the caller may put a command before the drop (a seccomp filter: no network socket). What it
cannot stop is in docs/security.md ("The fallback sandbox").
"""

import functools
import glob
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

from autograder.sandbox import cgroups, processes
from autograder.sandbox.kit_tree import kit_tree
from autograder.sandbox.processes import close_quietly, end_family

SANDBOX_UID = SANDBOX_GID = 65534   # "nobody" on Debian and most distributions
MiB, GiB = 1 << 20, 1 << 30

# Defaults of Limits: each applies to the worker and to every process it starts (prlimit, soft = hard).
# Measured 2026-11-22 and 2026-11-28 on a 2-core x86_64, Debian 12, kernel 6.18, torch 2.13.0 CPU, Python 3.11.
MEMORY_BYTES = 8 * GiB      # RLIMIT_DATA, as settings.grading.memory_limit_gb: the memory each process writes (its
#   private writable mappings and heap), not the address space it reserves. CUDA reserves far more address space than
#   it touches, and could not start under an 8 GiB RLIMIT_AS (measured on an NVIDIA H200); a reservation made
#   PROT_NONE (what CUDA's and glibc's arenas are until used) does not count here: under 8 GiB of RLIMIT_DATA a
#   64 GiB PROT_NONE reservation starts, a 9 GiB allocation fails at once (MemoryError), and memory touched a page
#   at a time stops at the limit (64 MiB chunks under 1 GiB: 960 MiB). `import torch` writes 0.21 GiB (VmData), torch with a 1000 x 1000 matmul, a
#   DataLoader with 2 workers, 16 threads and 32 Python threads 0.76 GiB (VmPeak 3.2 GiB: under RLIMIT_AS that
#   counted). A writable mapping counts even unused (MAP_NORESERVE or not): 64 GiB of it fails.
ADDRESS_SPACE_BYTES = None  # RLIMIT_AS: none by default (see above); Limits(address_space_bytes=...) sets one
CPU_SECONDS = 3600          # RLIMIT_CPU, all threads of one process: a backstop for a spinning worker, 20x the
#   165 CPU-seconds of those 429 check tests; wall-clock limits are the grader's (submission_timeout_s, 900 s).
PROCESSES = 512             # RLIMIT_NPROC: processes + threads of uid 65534 in this sandbox's user namespace
#   (counted per sandbox: 30 other uid-65534 processes on the machine did not count). A process runs 2 threads
#   per torch thread after a matmul (32 with 16 threads, 128 with 64), each DataLoader worker is one more
#   process: 512 leaves room for 64 cores and several workers, and ends a fork bomb.
FILE_BYTES = 1 * GiB        # RLIMIT_FSIZE: the largest file the course writes is a checkpoint; the AMP recipe's
#   model (3 x Linear(4096, 4096), float32) with SGD momentum would be 0.4 GB.
OPEN_FILES = 4096           # RLIMIT_NOFILE: 6 open after `import torch`, 7 with 2 DataLoader workers; a shared
#   tensor in flight between workers holds one (torch's file_descriptor strategy).
SHM_BYTES = 512 * MiB       # the sandbox's own /dev/shm (a tmpfs, not counted by RLIMIT_DATA): DataLoader workers
#   pass batches and multiprocessing its semaphores there. 4 batches of 64 x 3 x 224 x 224 float32: 154 MiB.

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/passwd", "/etc/group",
             "/etc/nsswitch.conf", "/etc/localtime")   # the loader's cache, user names (getpass), the time zone
NAMESPACES = ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
              "--hostname", "sandbox", "--die-with-parent", "--new-session")
USER_NAMESPACE = ("--unshare-user", "--disable-userns", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID))
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # .../autograder


class SandboxUnavailable(RuntimeError):
    """No sandbox can be made on this machine; the message says what is missing and what to do."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of the sandboxed process and of each process it starts (``None``: no limit)."""

    memory_bytes: int | None = MEMORY_BYTES   # RLIMIT_DATA: memory each process writes (not what it reserves)
    cpu_seconds: int | None = CPU_SECONDS     # RLIMIT_CPU: CPU time of each process (then SIGKILL)
    processes: int | None = PROCESSES         # RLIMIT_NPROC: processes + threads (per sandbox; see above)
    file_bytes: int | None = FILE_BYTES       # RLIMIT_FSIZE: largest file written (then SIGXFSZ / EFBIG)
    open_files: int | None = OPEN_FILES       # RLIMIT_NOFILE: open file descriptors of each process
    total_memory_bytes: int | None = None     # memory.max of the sandbox's own cgroup (all its processes together),
                                              # where the machine delegates one (cgroups.delegation); else unbounded
    address_space_bytes: int | None = ADDRESS_SPACE_BYTES   # RLIMIT_AS; None: the grader's own hard limit (a soft
                                              # limit the grading process set on itself is not passed on)

    def prlimit_options(self):
        """prlimit's options; a limit above this process's own hard limit (which the sandbox inherits and
        could not raise) is lowered to it."""
        values = {"DATA": self.memory_bytes, "AS": self.address_space_bytes, "CPU": self.cpu_seconds,
                  "NPROC": self.processes, "FSIZE": self.file_bytes, "NOFILE": self.open_files, "CORE": 0}
        options = []
        for name, value in values.items():
            hard = resource.getrlimit(getattr(resource, f"RLIMIT_{name}"))[1]
            if value is None and name == "AS":      # jobs.grader_memory_bound's soft RLIMIT_AS stays with the grader
                value = "unlimited" if hard == resource.RLIM_INFINITY else hard
            elif value is not None:
                value = int(value if hard == resource.RLIM_INFINITY else min(value, hard))
            if value is not None:
                options.append(f"--{name.lower()}={value}")
        return options


def default_limits():
    """``Limits()``, with the memory the instructor set in ``settings.grading.memory_limit_gb`` (RLIMIT_DATA of each
    process, and memory.max of the sandbox's cgroup where one is delegated)."""
    from autograder.settings import settings

    gigabytes = settings.grading.memory_limit_gb
    memory = int(gigabytes * GiB) if gigabytes else None
    return Limits(memory_bytes=memory, total_memory_bytes=memory)


THREADS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def default_env(scratch):
    """The whole environment inside unless the caller passes its own: nothing of the grader's but its thread
    counts (a grading worker's share of the cores, ``executors.local_workers``) and the GPUs it may use
    (``CUDA_VISIBLE_DEVICES``: a local cluster gives each worker one).
    ``import autograder`` finds the student kit (``kit_tree``), not the grader's own copy."""
    env = {"PATH": "/usr/bin:/bin", "HOME": scratch, "TMPDIR": scratch, "LANG": "C.UTF-8",
           "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "PYTHONPATH": kit_tree()}
    env.update({name: os.environ[name] for name in THREADS if os.environ.get(name, "").isdigit()})
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None and re.fullmatch(r"[A-Za-z0-9,:-]*", visible):
        env["CUDA_VISIBLE_DEVICES"] = visible
    return env


@functools.cache
def probe():
    """What sandbox this machine gives, e.g. "bwrap 0.8.0, user namespace, uid 65534"; raises if none.

    Runs a real (empty) Python in a sandbox once per process: about 0.1 s.
    """
    bwrap = _tools(True)["bwrap"]
    version = subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout.split()[-1]
    if tuple(int(part) for part in re.findall(r"\d+", version)[:2]) < (0, 8):
        raise SandboxUnavailable(f"bwrap {version} is too old: the sandbox needs 0.8.0 or newer "
                                 "(--disable-userns, --size). Install a newer bubblewrap.")
    with tempfile.TemporaryDirectory(prefix="sandbox-probe-") as scratch:
        trial = subprocess.run(command([sys.executable, "-I", "-S", "-c", ""], scratch=scratch),
                               capture_output=True, text=True, timeout=60, cwd=scratch)
    if trial.returncode != 0:
        raise SandboxUnavailable(f"bwrap cannot make a sandbox here ({trial.stderr.strip() or trial.returncode}). "
                                 f"{_userns_advice()} Or grade with --no-sandbox, on a trusted machine only.")
    how = "as root, then setpriv and a user namespace" if os.geteuid() == 0 else "user namespace"
    return f"bwrap {version}, {how}, uid {SANDBOX_UID}"


def command(argv, *, scratch, readable=(), limits=Limits(), env=None, sandboxed=True):
    """The full argv that runs ``argv`` in the sandbox, with working directory ``scratch``.

    ``scratch`` must exist; when the grader is root it is given to uid 65534 (so the sandbox can
    write it). ``readable``: more paths shown read-only, at the same path. ``env``: the complete
    environment inside (default: :func:`default_env`).
    """
    scratch = os.path.realpath(scratch)
    if not os.path.isdir(scratch):
        raise FileNotFoundError(f"the sandbox's scratch directory {scratch} does not exist")
    env = default_env(scratch) if env is None else dict(env)
    if any("=" in name or not name for name in env):
        raise ValueError(f"not an environment variable name: {[name for name in env if '=' in name or not name]}")
    tools = _tools(sandboxed)
    limited = [tools["prlimit"], *limits.prlimit_options(), "--", *argv]
    if sandboxed and "PWD" not in env:
        limited = [tools["env"], "-u", "PWD", *limited]   # bwrap --chdir sets PWD
    empty_env = [tools["env"], "-i", "-C", scratch, "--", *(f"{name}={value}" for name, value in env.items())]
    if not sandboxed:
        return [*empty_env, sys.executable, "-I", "-S", processes.__file__, "--supervise", *limited]
    view = _view(scratch, readable, tools)
    if os.geteuid() != 0:
        return [*empty_env, tools["bwrap"], *NAMESPACES, *USER_NAMESPACE, *view, "--", *limited]
    os.chown(scratch, SANDBOX_UID, SANDBOX_GID)
    drop_root = [tools["setpriv"], f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_GID}", "--clear-groups",
                 "--inh-caps=-all", "--bounding-set=-all", "--"]
    user_namespace = [tools["bwrap"], *USER_NAMESPACE, "--die-with-parent", "--dev-bind", "/", "/",
                      "--chdir", scratch, "--"]
    return [*empty_env, tools["bwrap"], *NAMESPACES, *view, "--", *drop_root, *user_namespace, *limited]


def start(argv, *, scratch, readable=(), limits=Limits(), env=None, sandboxed=True, stderr=None):
    """Start ``argv`` sandboxed; stdin and stdout are unbuffered binary pipes, stderr goes to ``stderr``.

    Call it from a thread that outlives the worker: the parent-death signal (bwrap's ``--die-with-parent``,
    the supervisor's) follows the thread that started it; measured, a worker started from a thread that
    ended 0.5 s later died with it.
    """
    if sandboxed:
        probe()
    full = command(argv, scratch=scratch, readable=readable, limits=limits, env=env, sandboxed=sandboxed)
    parent, bound = cgroups.memory_bound(limits.total_memory_bytes)
    group = cgroups.make(parent, limits.total_memory_bytes) if parent else None
    if group:
        full = cgroups.entering(group, full)
    try:
        proc = subprocess.Popen(full, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, env={},
                                stderr=subprocess.DEVNULL if stderr is None else stderr, cwd=scratch,
                                start_new_session=True, close_fds=True)
    except BaseException:
        cgroups.remove(group)
        raise
    proc.cgroup, proc.memory_bound = group, bound    # stop() removes the cgroup; the record says which bound held
    return proc


def stop(proc, grace_s=0.0):
    """End the sandbox and every process in it; wait until they are gone. Idempotent.

    With ``grace_s``, stdin is closed first and the worker has that long to exit by itself. Then every
    process descended from ``proc`` is stopped (SIGSTOP: none can fork any more), found again until
    none is new, and killed (SIGKILL): signals that are ignored or a new session change nothing. An
    orphan cannot leave the family: inside the sandbox its parent becomes the PID namespace's init
    (bwrap), without one the supervisor (a child subreaper).
    """
    if grace_s > 0 and proc.poll() is None:
        close_quietly(proc.stdin)
        try:
            proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            pass
    if proc.returncode is None:   # not reaped yet, so proc.pid is still this process
        end_family(proc.pid)
    proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        close_quietly(stream)
    member = getattr(proc, "loopback_member", None)     # loopback.sent's pidfd
    if member and member[1] is not None:
        os.close(member[1])
        proc.loopback_member = (None, None)
    cgroups.remove(getattr(proc, "cgroup", None))


# ---------------------------------------------------------------- the fallback: an unprivileged user, no namespaces

def fallback_command(argv, *, scratch, uid, gid, limits=Limits(), env=None, before_drop=()):
    """The argv that runs ``argv`` as ``uid``/``gid`` without namespaces, from a grader that is root.

    ``env -i`` (the environment is exactly ``env``, default :func:`default_env`), then the supervisor
    (``processes.py --supervise``, a child subreaper that stays root: the worker cannot signal it, and every process
    the worker orphans stays its child and ends with it), then ``before_drop`` (run as root; it must exec the rest:
    a seccomp filter installed there stays through ``execve``), then ``setpriv`` to ``uid`` with no capability and no
    supplementary group, then ``prlimit`` (set by the user itself, soft = hard). ``scratch`` is given to ``uid``.
    RLIMIT_NPROC counts every process of ``uid`` on the machine (no user namespace): the user must be the worker's
    alone."""
    if os.geteuid() != 0:
        raise SandboxUnavailable("the fallback sandbox drops from root to its own user: run the grader as root")
    if uid == 0 or gid == 0:
        raise ValueError("the fallback sandbox's user must not be root")
    scratch = os.path.realpath(scratch)
    if not os.path.isdir(scratch):
        raise FileNotFoundError(f"the sandbox's scratch directory {scratch} does not exist")
    env = default_env(scratch) if env is None else dict(env)
    tools = {name: shutil.which(name) for name in ("env", "prlimit", "setpriv")}
    missing = [name for name, path in tools.items() if not path]
    if missing:
        raise SandboxUnavailable(f"{', '.join(missing)} not found on PATH: install util-linux and coreutils.")
    os.chown(scratch, uid, gid)
    os.chmod(scratch, 0o700)
    empty_env = [tools["env"], "-i", "-C", scratch, "--", *(f"{name}={value}" for name, value in env.items())]
    supervisor = [sys.executable, "-I", "-S", processes.__file__, "--supervise"]
    drop = [tools["setpriv"], f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs", "--"]
    limited = [tools["prlimit"], *limits.prlimit_options(), "--", *argv]
    return [*empty_env, *supervisor, *before_drop, *drop, *limited]


def start_fallback(argv, *, scratch, uid, gid, limits=Limits(), env=None, before_drop=(), stderr=None):
    """Start ``argv`` under :func:`fallback_command`; stdin and stdout are unbuffered binary pipes. :func:`stop` ends
    it: the supervisor and everything below it (orphans included) are one family."""
    full = fallback_command(argv, scratch=scratch, uid=uid, gid=gid, limits=limits, env=env, before_drop=before_drop)
    proc = subprocess.Popen(full, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, env={},
                            stderr=subprocess.DEVNULL if stderr is None else stderr, cwd=scratch,
                            start_new_session=True, close_fds=True)
    proc.cgroup = None
    proc.memory_bound = ("rlimits only (the fallback sandbox: no cgroup, no user namespace): "
                         f"RLIMIT_DATA {limits.memory_bytes} bytes per process, RLIMIT_NPROC {limits.processes}")
    return proc


# ---------------------------------------------------------------- the view of the file system

def _view(scratch, readable, tools):
    """bwrap options for the mounts: read-only system and Python directories, the scratch read-write."""
    options = ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]
    for device in sorted(glob.glob("/dev/nvidia*")):   # the GPU, where there is one (untested: no GPU lent)
        options += ["--dev-bind", device, device]
    covered = set()
    for name in SYSTEM_DIRS:
        if os.path.islink(name):
            options += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            options += ["--ro-bind", name, name]
        covered.add(name)
    python = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
              os.path.dirname(sys.executable), *tools.values(), *ETC_FILES}
    mounts = {path: "--ro-bind" for path in _with_real_paths(python)}
    _refuse_course(mounts)
    kit = kit_tree()
    mounts[kit] = "--ro-bind"
    for path in readable:
        if not os.path.exists(path):
            raise FileNotFoundError(f"{path}, to be shown read-only in the sandbox, does not exist")
        mounts[os.path.abspath(path)] = "--ro-bind"
    mounts[scratch] = "--bind"
    made = set(covered)
    for path in sorted(mounts, key=lambda p: (p.count("/"), p)):
        if mounts[path] == "--ro-bind" and (_under(path, covered) or not os.path.exists(path)):
            continue
        for parent in _ancestors(path):
            if parent not in made and not _under(parent, covered):
                options += ["--perms", "0755", "--dir", parent]   # bwrap would make it 0700, root's
                made.add(parent)
        options += [mounts[path], path, path]
        covered.add(path)
        made.add(path)
    if "/tmp" not in made:
        options += ["--perms", "0755", "--dir", "/tmp"]   # empty, read-only: the root path's second bwrap stages there
    for package in _with_real_paths([PACKAGE_DIR]):
        if _under(package, covered):   # the grader's copy inside a shown directory (site-packages): the kit over it
            options += ["--ro-bind", os.path.join(kit, "autograder"), package]
    return [*options, "--chdir", scratch, "--remount-ro", "/dev", "--remount-ro", "/"]


def _with_real_paths(paths):
    out = set()
    for path in paths:
        if path and os.path.exists(path):
            out |= {os.path.abspath(path), os.path.realpath(path)}
    return out


def _refuse_course(mounts):
    """No automatic mount may show the directory that holds the package (the course, with solutions/)."""
    home = os.path.dirname(PACKAGE_DIR)
    if os.path.basename(home) in ("site-packages", "dist-packages"):
        return
    for path in mounts:
        if home == path or _under(home, {path}):
            raise SandboxUnavailable(f"{path} (the Python installation) contains {home}, the directory of the "
                                     "autograder package: mounting it would show the course to the student. "
                                     "Use a Python installed outside the course directory.")


def _under(path, roots):
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _ancestors(path):
    parts = path.strip("/").split("/")[:-1]
    return ["/" + "/".join(parts[:i]) for i in range(1, len(parts) + 1)]


# ---------------------------------------------------------------- tools and diagnosis

def _tools(sandboxed):
    names = ["env", "prlimit"] + (["bwrap"] + (["setpriv"] if os.geteuid() == 0 else []) if sandboxed else [])
    found = {name: shutil.which(name) for name in names}
    if "bwrap" in found and not found["bwrap"]:
        raise SandboxUnavailable("bubblewrap is not installed (no `bwrap` on PATH): install it (Debian, Ubuntu: "
                                 "apt-get install bubblewrap; Fedora: dnf install bubblewrap; "
                                 "scripts/install-system-packages.sh does it), or grade with --no-sandbox, "
                                 "on a trusted machine only.")
    missing = [name for name, path in found.items() if not path]
    if missing:
        raise SandboxUnavailable(f"{', '.join(missing)} not found on PATH: install util-linux and coreutils.")
    return {name: os.path.realpath(path) for name, path in found.items()}


def _userns_advice():
    def read(path):
        try:
            with open(path) as handle:
                return handle.read().strip()
        except OSError:
            return None

    advice = []
    if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
        advice.append("AppArmor forbids unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1, "
                      "as on Ubuntu 23.10 and later): install an AppArmor profile that lets /usr/bin/bwrap use them "
                      "(docs/sandbox.md), or set that sysctl to 0.")
    if read("/proc/sys/user/max_user_namespaces") == "0":
        advice.append("User namespaces are switched off (user.max_user_namespaces=0): set it to e.g. 15000.")
    if read("/proc/sys/kernel/unprivileged_userns_clone") == "0":
        advice.append("Unprivileged user namespaces are off (kernel.unprivileged_userns_clone=0): set it to 1.")
    return " ".join(advice) or "User namespaces may be restricted here (docs/sandbox.md)."
