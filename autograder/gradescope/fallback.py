"""The fallback sandbox of a Gradescope bundle: the worker as an unprivileged user, where no namespace can be made.

Gradescope's container runs the autograder as root under Docker's default seccomp profile, which refuses the user
namespaces bubblewrap needs. ``setup.sh`` then makes a user of the worker's own (:data:`USER`), and
:func:`launcher` starts each worker through ``sandbox.start_fallback``: a root supervisor, this module's seccomp
filter (no network socket but ``AF_UNIX``), ``setpriv`` to that user with no capability, the usual rlimits, an empty
environment, a scratch directory of its own. After grading, :func:`end_user_processes` kills whatever of that user
is still alive and :func:`remove_user_files` removes what it left in the world-writable directories, before root
writes ``results.json``. docs/security.md ("The fallback sandbox") says what this does not stop.
"""

import os
import pwd
import signal
import sys
import time

from autograder.gradescope import seccomp
from autograder.sandbox import bubblewrap as sandbox

USER = "epl-student"                            # made by setup.sh; no process but the workers runs as it
BASELINE_USER = "epl-baseline"                  # made by setup.sh: the clean worker that times the baselines
#   Without a pid namespace a process may signal every process of its own uid: were the clean worker the student's
#   user, a notebook could SIGSTOP it while it times a baseline and earn the speed points on a slowed baseline.
WORLD_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm")   # where the worker can still write outside its scratch


def account(name=USER):
    """``(uid, gid)`` of the worker's user; SandboxUnavailable when setup.sh did not make it."""
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        raise sandbox.SandboxUnavailable(f"bwrap cannot make a sandbox here and the fallback's user {name!r} does not "
                                         "exist: run the bundle's setup.sh (it makes it)") from None
    if entry.pw_uid == 0:
        raise sandbox.SandboxUnavailable(f"the fallback's user {name!r} is root")
    return entry.pw_uid, entry.pw_gid


def before_drop():
    """The seccomp filter's command, run as root before the drop (nothing on another architecture)."""
    if not seccomp.supported():
        return []
    return [sys.executable, "-I", "-S", seccomp.__file__, "deny-network", "--"]


def launcher(argv, scratch):
    """A ``trusted_runner`` launcher: the worker in the fallback sandbox, as :data:`USER`. Its ``clean`` launcher
    (the worker no student code runs in, which times the baselines) runs as :data:`BASELINE_USER`."""
    uid, gid = account()
    return start(argv, scratch, uid, gid, USER)


def _clean_launcher(argv, scratch):
    uid, gid = account(BASELINE_USER)
    return start(argv, scratch, uid, gid, BASELINE_USER)


launcher.clean = _clean_launcher


def launcher_as(uid, gid, name, clean_uid):
    """The same launchers for other users, which may have no entry in /etc/passwd (the adversarial suite's run on a
    machine whose users it must not change): ``name`` goes in the worker's LOGNAME and USER, which getpass reads;
    ``clean_uid`` (its own group too) runs the clean worker."""
    def launch(argv, scratch):
        return start(argv, scratch, uid, gid, name)

    def clean(argv, scratch):
        return start(argv, scratch, clean_uid, clean_uid, name + "-baseline")
    launch.clean = clean
    return launch


def start(argv, scratch, uid, gid, name):
    env = dict(sandbox.default_env(os.path.realpath(scratch)), LOGNAME=name, USER=name)
    proc = sandbox.start_fallback(argv, scratch=scratch, uid=uid, gid=gid, limits=sandbox.default_limits(), env=env,
                                  before_drop=before_drop())
    return proc, sandbox.stop


def describe(why=""):
    """What the results say of this sandbox."""
    uid, _ = account()
    network = ("a seccomp filter refuses every socket but AF_UNIX" if seccomp.supported() else
               "the network is NOT blocked (the seccomp filter is x86_64 only)")
    return (f"the fallback sandbox (user {USER}, uid {uid}, no namespaces; {network})"
            + (f": bwrap could not make a sandbox here ({why})" if why else ""))


def user_processes(uid):
    """Pids whose real, effective or saved uid is ``uid``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", encoding="ascii", errors="replace") as handle:
                uids = next(line for line in handle if line.startswith("Uid:")).split()[1:4]
        except (OSError, StopIteration):
            continue
        if str(uid) in uids:
            found.append(int(name))
    return found


def end_user_processes(uid, timeout_s=10.0):
    """SIGKILL every process of ``uid`` until none is left (a fork between two scans is caught by the next);
    returns how many were killed. Only the workers run as this user, so nothing else is touched."""
    killed, deadline = set(), time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        alive = user_processes(uid)
        if not alive:
            break
        for pid in alive:
            try:
                os.kill(pid, signal.SIGSTOP)
            except OSError:
                pass
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        time.sleep(0.05)
    return len(killed)


def remove_user_files(uid, places=WORLD_WRITABLE):
    """Remove what ``uid`` wrote in the world-writable directories (without following links); returns the count."""
    removed = 0
    for place in places:
        for folder, dirs, files in os.walk(place, topdown=False):
            for name in files + dirs:
                path = os.path.join(folder, name)
                try:
                    info = os.lstat(path)
                    if info.st_uid != uid:
                        continue
                    if os.path.isdir(path) and not os.path.islink(path):
                        os.rmdir(path)
                    else:
                        os.unlink(path)
                    removed += 1
                except OSError:
                    continue
    return removed
