"""Real Unix accounts for the hub tests: created with ``useradd``, given a password with ``chpasswd``,
removed with ``userdel -r``; commands run as them with ``runuser``.

Homes are made mode 0700 (``HOME_MODE``), as a course server must make them: with Debian's default
(0755, from ``UMASK 022``) every student could read every other student's notebooks, their nbgrader
cache (which holds each submission's secret, the name of its feedback file) and the instructor's
course directory with its gradebook. docs/deploy.md says so.
"""

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

# What a command run as an account sees of the environment: nothing of root's but these.
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class Account:
    name: str
    password: str
    uid: int
    gid: int
    home: Path


def missing_tools():
    """Why accounts cannot be made here, or None."""
    if os.geteuid() != 0:
        return "the hub tests create Unix accounts and spawn servers as them: they need root"
    tools = [t for t in ("useradd", "userdel", "chpasswd", "runuser") if not shutil.which(t)]
    if tools:
        return f"{', '.join(tools)} not found (Debian: the passwd and util-linux packages)"
    return None


def create(name):
    """A new account with a 0700 home and a random password."""
    password = secrets.token_urlsafe(12)
    subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "-K", "HOME_MODE=0700", name],
                   check=True, capture_output=True, text=True)
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", check=True, capture_output=True, text=True)
    entry = pwd.getpwnam(name)
    return Account(name, password, entry.pw_uid, entry.pw_gid, Path(entry.pw_dir))


def end_processes(account, grace_s=5):
    """End every process that runs as ``account`` (the servers, kernels and workers the tests started as
    it), by process id: SIGTERM, then SIGKILL for those still there after ``grace_s``."""
    procs = [p for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real == account.uid]
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.send_signal(signal.SIGTERM)
    _, alive = psutil.wait_procs(procs, timeout=grace_s)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=grace_s)


def remove(account):
    """End the account's processes, then ``userdel -r`` (its home and mail spool go with it)."""
    end_processes(account)
    for _ in range(10):
        done = subprocess.run(["userdel", "-r", account.name], capture_output=True, text=True)
        # 0: removed; 12: the home could not be removed (it is then removed below); 6: no such user
        if done.returncode in (0, 6, 12):
            break
        time.sleep(0.5)          # 8: the user is still logged in (a process was still ending)
    shutil.rmtree(account.home, ignore_errors=True)


def environment(account, path=BASE_PATH, **extra):
    """The environment a login of ``account`` has: its HOME, USER, LOGNAME and SHELL, a plain PATH."""
    return {"HOME": str(account.home), "USER": account.name, "LOGNAME": account.name, "SHELL": "/bin/bash",
            "PATH": path, "LANG": "C.UTF-8", "PYTHONWARNINGS": "ignore", **extra}


def run_as(account, argv, cwd=None, env=None, timeout=300, check=False, input=None):
    """Run ``argv`` as ``account`` (``runuser``: its uid, gid and groups; no capability of root's) with
    only the environment ``env`` (``environment(account)`` by default); output captured as text."""
    env = env or environment(account)
    command = ["runuser", "-u", account.name, "--", "env", "-i",
               *(f"{k}={v}" for k, v in env.items()), *map(str, argv)]
    return subprocess.run(command, cwd=cwd or account.home, capture_output=True, text=True, timeout=timeout,
                          check=check, input=input)


def give(account, path):
    """Make ``path`` (a file or a tree) the account's own."""
    path = Path(path)
    for item in [path, *(path.rglob("*") if path.is_dir() else [])]:
        os.chown(item, account.uid, account.gid, follow_symlinks=False)


@contextlib.contextmanager
def traversable(*paths):
    """Every directory above ``paths`` lets others pass (o+x) while the block runs, and gets its mode back
    after. The interpreter of a virtual environment may live under /root (mode 0700; pyenv's Pythons do);
    the accounts must reach it, as they reach /usr/bin/python3 on a course server."""
    changed = {}
    for path in paths:
        for parent in reversed(Path(os.path.realpath(path)).parents):
            mode = parent.stat().st_mode
            if parent not in changed and not mode & 0o001:
                changed[parent] = mode & 0o7777
                os.chmod(parent, changed[parent] | 0o001)
    try:
        yield
    finally:
        for parent, mode in changed.items():
            with contextlib.suppress(OSError):
                os.chmod(parent, mode)
