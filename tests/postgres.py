"""A real PostgreSQL server for the tests: started on 127.0.0.1 by the test itself, stopped by its process id.

The server binaries are Debian's (``postgresql`` package; ``bash scripts/install-system-packages.sh``
installs it): ``initdb`` and ``postgres`` from the highest ``/usr/lib/postgresql/<version>/bin``, else from
PATH. Without them :func:`postgres_server` raises :class:`PostgresUnavailable`; tests call
:func:`require_postgres` first, which skips with the reason, except in CI (``CI`` set), where it fails.

::

    with postgres_server(tmp_path) as server:
        gb = Gradebook(server.url)          # postgresql+psycopg://postgres@127.0.0.1:PORT/gradebook
        with server.connect() as conn:      # a psycopg connection to the same database
            ...

Each call runs ``initdb`` on a fresh data directory (trust authentication, superuser ``postgres``, no fsync)
and starts ``postgres`` directly with :class:`subprocess.Popen` on a free port, in its own process group,
so the test owns its pid. At exit, also when the body raised, the server gets SIGINT (PostgreSQL's *fast*
shutdown, which ends open sessions: SIGTERM is the *smart* one, which waits for every client, a leaked
connection pool included, to disconnect), then after 30 s SIGKILL to its process group; then the data
directory is removed. The server's log stays in ``directory`` (``postgres-*.log``).

As root (initdb refuses to run as root) initdb and the server run as Debian's ``postgres`` system user,
through util-linux's ``setpriv`` (which execs, so the pid is the server's own).
Their directory is then a fresh ``tempfile.mkdtemp()`` under /tmp owned by that user, not ``directory``:
pytest's ``tmp_path`` lies under /tmp/pytest-of-root, mode 0700, which that user cannot traverse.
Otherwise it is a fresh directory inside ``directory``, and everything runs as the current user.

nbgrader's ``Gradebook(url)`` runs the ``alembic`` executable (``alembic heads``) when it creates the schema,
so the environment's scripts directory must be on PATH: for the duration of the ``with`` block
:func:`postgres_server` puts ``os.path.dirname(sys.executable)`` (the venv's ``bin``) at the front of
``os.environ["PATH"]`` when it is not there already, and restores PATH at exit.
"""

import contextlib
import dataclasses
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

HOST = "127.0.0.1"
SUPERUSER = "postgres"
SYSTEM_USER = "postgres"            # Debian's postgresql package creates it
DEBIAN_ROOT = Path("/usr/lib/postgresql")
INSTALL_HINT = "run `bash scripts/install-system-packages.sh` (Debian's `postgresql` package)"
START_TIMEOUT = 30.0
STOP_TIMEOUT = 30.0
# A Unix socket's path is at most 107 bytes: longer socket directories get no socket (TCP only).
_MAX_SOCKET_DIR = 80


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server on this machine (or, as root, no ``postgres`` user to run it as)."""


@dataclasses.dataclass(frozen=True)
class PostgresServer:
    """A running server and its throwaway database."""
    url: str                # SQLAlchemy URL of the database, e.g. for nbgrader's Gradebook
    host: str
    port: int
    pid: int                # the postmaster, which this process started and will stop
    data_dir: Path
    database: str
    user: str
    log_path: Path

    @property
    def conninfo(self):
        return f"host={self.host} port={self.port} user={self.user} dbname={self.database}"

    def connect(self, **kwargs):
        """A new psycopg connection to the database (``autocommit=True`` etc. pass through)."""
        return psycopg.connect(self.conninfo, **kwargs)


def _version_key(path):
    return tuple(int(part) for part in re.findall(r"\d+", path.parent.name)) or (0,)


def postgres_bin_dir():
    """The directory holding ``initdb`` and ``postgres``; :class:`PostgresUnavailable` when there is none,
    or when running as root with no ``postgres`` user (or no setpriv) to run them as."""
    candidates = sorted(DEBIAN_ROOT.glob("*/bin"), key=_version_key, reverse=True) if DEBIAN_ROOT.is_dir() else []
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(os.path.realpath(initdb)).parent)
    bin_dir = next((d for d in candidates
                    if all(os.access(d / name, os.X_OK) for name in ("initdb", "postgres"))), None)
    if bin_dir is None:
        raise PostgresUnavailable(f"no PostgreSQL server (initdb, postgres) in {DEBIAN_ROOT}/*/bin or on PATH: "
                                  f"{INSTALL_HINT}")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SYSTEM_USER)
        except KeyError:
            raise PostgresUnavailable(f"running as root, and there is no `{SYSTEM_USER}` user to run the "
                                      f"PostgreSQL server as (initdb refuses root): {INSTALL_HINT}") from None
        if not shutil.which("setpriv"):
            raise PostgresUnavailable("running as root, and there is no setpriv (Debian's util-linux) to run "
                                      "the PostgreSQL server as another user")
    return bin_dir


def require_postgres():
    """:func:`postgres_bin_dir`, or skip the test with the reason (fail it when ``CI`` is set)."""
    try:
        return postgres_bin_dir()
    except PostgresUnavailable as error:
        reason = str(error)
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set: the PostgreSQL tests must run here, not skip)", pytrace=False)
        pytest.skip(reason)


def _as_server_user():
    """The command prefix that runs a program as the server's user: nothing unless we are root."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", f"--reuid={SYSTEM_USER}", f"--regid={SYSTEM_USER}", "--init-groups"]


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _read(path):
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _stop(process):
    """Fast shutdown by pid; SIGKILL to the server's process group (postmaster and backends) if it hangs."""
    if process.poll() is not None:
        return                          # exited by itself: its backends exit when they see it gone
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        # Not yet reaped, so the group id (the postmaster's pid, start_new_session) is still ours.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextlib.contextmanager
def _venv_bin_on_path():
    bin_dir = os.path.dirname(sys.executable)
    old = os.environ.get("PATH")
    if bin_dir in (old or "").split(os.pathsep):
        yield
        return
    os.environ["PATH"] = bin_dir + (os.pathsep + old if old else "")
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("PATH", None)
        else:
            os.environ["PATH"] = old


def _start(bin_dir, base, log_path, prefix):
    """Start the postmaster on a free port and wait until it accepts connections: (process, port)."""
    data_dir = base / "data"
    socket_dir = base / "socket"
    socket_dir.mkdir(exist_ok=True)
    if prefix:
        shutil.chown(socket_dir, SYSTEM_USER, SYSTEM_USER)
    sockets = str(socket_dir) if len(str(socket_dir)) <= _MAX_SOCKET_DIR else ""
    for attempt in range(3):            # the free port can be taken between choosing it and binding it
        port = _free_port()
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                [*prefix, str(bin_dir / "postgres"), "-D", str(data_dir), "-h", HOST, "-p", str(port),
                 "-k", sockets, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=base,
                start_new_session=True)
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while True:
                if process.poll() is not None:
                    break
                try:
                    psycopg.connect(host=HOST, port=port, user=SUPERUSER, dbname="postgres",
                                    connect_timeout=2).close()
                    return process, port
                except psycopg.OperationalError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"PostgreSQL did not accept connections on {HOST}:{port} within "
                                           f"{START_TIMEOUT:.0f} s; its log ({log_path}):\n{_read(log_path)}")
                    time.sleep(0.1)
        except BaseException:
            _stop(process)
            raise
        process.wait()
        if "Address already in use" not in _read(log_path) or attempt == 2:
            raise RuntimeError(f"PostgreSQL exited with status {process.returncode} on start; "
                               f"its log ({log_path}):\n{_read(log_path)}")


@contextlib.contextmanager
def postgres_server(directory, database="gradebook"):
    """Run a fresh PostgreSQL server on 127.0.0.1 for the ``with`` block; yields a :class:`PostgresServer`.

    ``directory`` (e.g. pytest's ``tmp_path``) receives the server's log, and, unless running as root,
    its data directory (see the module's docstring)."""
    bin_dir = postgres_bin_dir()
    prefix = _as_server_user()
    directory = Path(directory)
    if prefix:
        base = Path(tempfile.mkdtemp(prefix="epl-postgres-"))
        os.chmod(base, 0o755)
        shutil.chown(base, SYSTEM_USER, SYSTEM_USER)
    else:
        base = Path(tempfile.mkdtemp(prefix="postgres-", dir=directory))
    log_path = directory / f"{base.name}.log"
    data_dir = base / "data"
    process = None
    try:
        initdb = [str(bin_dir / "initdb"), "-D", str(data_dir), "--auth=trust", "-U", SUPERUSER,
                  "--encoding=UTF8", "--locale=C", "--no-sync"]
        if "--no-instructions" in subprocess.run([str(bin_dir / "initdb"), "--help"], capture_output=True,
                                                 text=True).stdout:
            initdb.append("--no-instructions")
        done = subprocess.run([*prefix, *initdb], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              cwd=base)
        if done.returncode:
            raise RuntimeError(f"initdb failed ({done.returncode}):\n{done.stdout}{done.stderr}")
        process, port = _start(bin_dir, base, log_path, prefix)
        with psycopg.connect(host=HOST, port=port, user=SUPERUSER, dbname="postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{database}"')
        server = PostgresServer(url=f"postgresql+psycopg://{SUPERUSER}@{HOST}:{port}/{database}", host=HOST,
                                port=port, pid=process.pid, data_dir=data_dir, database=database,
                                user=SUPERUSER, log_path=log_path)
        with _venv_bin_on_path():
            yield server
    finally:
        if process is not None:
            _stop(process)
        shutil.rmtree(base, ignore_errors=True)
