"""The sandbox, tried for real: each test runs a sandboxed ``python -c`` in bubblewrap and judges from outside.

Without bwrap (or with user namespaces restricted) the sandboxed tests skip with probe()'s message;
in CI (``CI`` set) they fail instead.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid

import pytest

from autograder.sandbox import bubblewrap as sandbox
from autograder.sandbox.bubblewrap import GiB, Limits, MiB
from autograder.sandbox.kit_tree import kit_tree
from autograder.settings import override

IS_ROOT = os.geteuid() == 0
OWNER_OUTSIDE = sandbox.SANDBOX_UID if IS_ROOT else os.geteuid()
REPO = os.path.dirname(sandbox.PACKAGE_DIR)


@pytest.fixture
def scratch():
    """A short scratch path, as the grader's (``/tmp/epl-worker-XXXXXXXX``): the sandbox's temporary directory, where
    a DataLoader's worker binds an AF_UNIX socket, whose path may not pass 107 bytes. Under a pytest worker
    ``tmp_path`` is longer (``.../popen-gw1/<test name>/``), the DataLoader worker failed with "AF_UNIX path too
    long", and its loader waited for it until the test's 60 s ran out."""
    path = tempfile.mkdtemp(prefix="epl-test-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def run(code, scratch, timeout=60, **options):
    """Run ``code`` in a sandboxed python; return what it printed last, as JSON."""
    argv = sandbox.command([sys.executable, "-c", textwrap.dedent(code)], scratch=scratch, **options)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)   # with the grader's environment
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_probe_describes_the_sandbox(ready):
    assert ready.startswith("bwrap ") and f"uid {sandbox.SANDBOX_UID}" in ready


def test_no_network_only_lo(ready, scratch):
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    seen = run(f"""
        import json, socket
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=2)
            reached = True
        except OSError as error:
            reached = repr(error)
        print(json.dumps({{"reached": reached, "interfaces": [name for _, name in socket.if_nameindex()]}}))
        """, scratch)
    listener.setblocking(False)
    with pytest.raises(BlockingIOError):
        listener.accept()
    listener.close()
    assert seen["reached"] is not True and "Connection refused" in seen["reached"]
    assert seen["interfaces"] == ["lo"]


def test_own_pid_namespace_hides_the_grader(ready, scratch):
    grader, its_parent = os.getpid(), os.getppid()
    seen = run(f"""
        import json, os
        def signal_ok(pid):
            try:
                os.kill(pid, 0)
                return True
            except OSError:
                return False
        pids = sorted(int(name) for name in os.listdir("/proc") if name.isdigit())
        print(json.dumps({{"pid": os.getpid(), "pids": pids,
                          "signal": [signal_ok({grader}), signal_ok({its_parent})]}}))
        """, scratch)
    assert seen["pid"] <= 3                                    # bwrap's init is 1 (and the root path's second bwrap)
    assert max(seen["pids"]) <= 4 and grader not in seen["pids"] and its_parent not in seen["pids"]
    assert seen["signal"] == [False, False]


def test_course_root_tmp_and_home_are_hidden(ready, tmp_path, scratch):
    course = tmp_path / "course"
    for name in ("solutions", "source", "submitted/alice", "autograded"):
        (course / name).mkdir(parents=True)
    (course / "solutions" / "basics.py").write_text("ANSWER = 42\n")
    (course / "gradebook.db").write_text("grades")
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    secrets = [course / "solutions" / "basics.py", course / "gradebook.db", course / "nbgrader_config.py",
               os.path.join(REPO, "solutions", "basics.py"), os.path.join(REPO, "nbgrader_config.py"),
               "/root/.bashrc", "/etc/shadow", "/etc/hostname"]
    seen = run(f"""
        import json, os
        def listing(path):
            try:
                return sorted(os.listdir(path))
            except OSError:
                return None
        readable = []
        for path in {[str(path) for path in secrets]!r}:
            try:
                open(path).read()
                readable.append(path)
            except OSError:
                pass
        print(json.dumps({{"readable": readable, "tmp_path": listing({str(tmp_path)!r}),
                          "repo": listing({REPO!r}), "root": listing("/root"), "home": listing("/home"),
                          "tmp": listing("/tmp"), "etc": listing("/etc")}}))
        """, scratch)
    assert seen["readable"] == []
    assert seen["tmp_path"] is None                          # the course (and the test's directory) is not there
    assert not {"solutions", "autograder"} & set(seen["repo"] or [])   # the package shown is the kit, elsewhere
    under_root = {path.split("/")[2] for path in (sys.base_prefix, sys.prefix) if path.startswith("/root/")}
    assert set(seen["root"] or []) <= under_root             # only the way to the interpreter
    assert seen["home"] is None
    shown = (scratch, sys.prefix, sys.base_prefix, os.path.realpath(sys.prefix), kit_tree())
    # only the ancestors of what is bound (the scratch, the kit; the venv when the checkout is under /tmp)
    assert set(seen["tmp"]) <= {path.split("/")[2] for path in shown if path.startswith("/tmp/")}
    assert set(seen["etc"]) <= {os.path.basename(path) for path in sandbox.ETC_FILES}


def test_writes_only_to_scratch(ready, scratch):
    targets = [os.path.join(scratch, "ok"), os.path.join(sandbox.PACKAGE_DIR, "x.py"), "/usr/x", "/x", "/etc/x",
               "/tmp/x", "/dev/x", "/proc/x", os.path.join(REPO, "x")]
    seen = run(f"""
        import json
        written = []
        for path in {targets!r}:
            try:
                with open(path, "w") as handle:
                    handle.write("x")
                written.append(path)
            except OSError:
                pass
        print(json.dumps(written))
        """, scratch)
    assert seen == [targets[0]]
    assert os.stat(targets[0]).st_uid == OWNER_OUTSIDE
    assert not os.path.exists(targets[1])


def test_runs_as_nobody_with_no_capabilities(ready, scratch):
    seen = run("""
        import ctypes, json, os
        status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
        open("mine", "w").close()
        new_user_namespace = ctypes.CDLL(None).unshare(0x10000000)   # CLONE_NEWUSER: -1 when refused
        print(json.dumps({"uid": os.getuid(), "gid": os.getgid(), "caps": status["CapEff"].strip(),
                          "no_new_privs": status["NoNewPrivs"].strip(), "userns": new_user_namespace}))
        """, scratch)
    assert seen["uid"] == seen["gid"] == sandbox.SANDBOX_UID
    assert int(seen["caps"], 16) == 0 and seen["no_new_privs"] == "1"
    assert seen["userns"] == -1                                   # bwrap --disable-userns
    owner = os.stat(os.path.join(scratch, "mine")).st_uid
    assert owner == OWNER_OUTSIDE and (owner != 0 or not IS_ROOT)


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "no-sandbox"])
def test_environment_is_exactly_what_was_passed(ready, scratch, monkeypatch, sandboxed):
    monkeypatch.setenv("SECRET_TOKEN", "grader-only")
    # As exec'd (os.environ may gain LC_CTYPE: Python's own C-locale coercion, PEP 538).
    code = "import json; print(json.dumps(dict(v.split('=', 1) for v in open('/proc/self/environ').read().split('\\0') if v)))"
    assert run(code, scratch, sandboxed=sandboxed) == sandbox.default_env(scratch)
    assert run(code, scratch, sandboxed=sandboxed, env={"ONLY": "this"}) == {"ONLY": "this"}


def test_torch_autograder_and_dataloader_workers(ready, scratch):
    seen = run("""
        import json, os, torch, autograder
        from torch.utils.data import DataLoader
        batches = [batch.tolist() for batch in DataLoader(list(range(8)), batch_size=4, num_workers=2)]
        peak = [line for line in open("/proc/self/status") if line.startswith("VmPeak")][0].split()[1]
        print(json.dumps({"torch": torch.__version__, "autograder": autograder.__file__, "batches": batches,
                          "peak_gib": int(peak) / 2**20}))
        """, scratch)
    assert seen["autograder"] == os.path.join(kit_tree(), "autograder", "__init__.py")   # the student kit's copy
    assert seen["batches"] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert seen["peak_gib"] < sandbox.MEMORY_BYTES / GiB


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "no-sandbox"])
def test_limits_are_applied(ready, scratch, sandboxed):
    limits = Limits(memory_bytes=4 * GiB, cpu_seconds=77, processes=300, file_bytes=5 * MiB, open_files=555,
                    address_space_bytes=40 * GiB)
    seen = run("""
        import json, resource
        names = ["DATA", "AS", "CPU", "NPROC", "FSIZE", "NOFILE", "CORE"]
        print(json.dumps([resource.getrlimit(getattr(resource, "RLIMIT_" + name)) for name in names]))
        """, scratch, limits=limits, sandboxed=sandboxed)
    expected = [4 * GiB, 40 * GiB, 77, 300, 5 * MiB, 555, 0]
    assert seen == [[value, value] for value in expected]


def test_limits_above_the_graders_own_are_lowered_to_them(ready, scratch):
    """A grader under a hard RLIMIT_DATA of its own still starts a sandbox whose default is larger; a soft RLIMIT_AS
    it set on itself (jobs.grader_memory_bound) is not passed on: the sandbox gets the hard limit."""
    grader = f"""
        import resource, subprocess, sys
        from autograder.sandbox import bubblewrap as sandbox
        resource.setrlimit(resource.RLIMIT_DATA, (6 * 2**30, 6 * 2**30))
        resource.setrlimit(resource.RLIMIT_AS, (5 * 2**30, resource.RLIM_INFINITY))
        code = "import resource; print(resource.getrlimit(resource.RLIMIT_DATA), resource.getrlimit(resource.RLIMIT_AS))"
        done = subprocess.run(sandbox.command([sys.executable, "-c", code], scratch={scratch!r}), capture_output=True)
        sys.stdout.buffer.write(done.stdout + done.stderr)
        """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(grader)], capture_output=True, text=True,
                          timeout=60, env={"PATH": os.environ["PATH"], "PYTHONPATH": REPO})
    assert done.stdout.strip() == f"({6 * GiB}, {6 * GiB}) (-1, -1)", done.stderr


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "no-sandbox"])
def test_memory_hog_gets_memory_error(ready, scratch, sandboxed):
    seen = run("""
        import json
        try:
            hog = bytes(16 * 2**30)     # calloc: without a limit it would not touch the memory
            print(json.dumps("allocated"))
        except MemoryError:
            print(json.dumps("MemoryError"))
        """, scratch, sandboxed=sandboxed)
    assert seen == "MemoryError"


def test_process_limit_stops_a_fork_bomb(ready, scratch):
    seen = run("""
        import json, os, time
        children = 0
        try:
            for _ in range(200):
                if os.fork() == 0:
                    time.sleep(2)
                    os._exit(0)
                children += 1
            stopped = None
        except OSError as error:
            stopped = error.strerror
        print(json.dumps({"children": children, "stopped": stopped}))
        """, scratch, limits=Limits(processes=20))
    assert seen["stopped"] == "Resource temporarily unavailable" and 10 <= seen["children"] < 20


def test_file_size_limit(ready, scratch):
    seen = run("""
        import json, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        try:
            with open("big", "wb") as handle:
                handle.write(bytes(2 * 2**20))
            print(json.dumps("written"))
        except OSError as error:
            print(json.dumps(error.strerror))
        """, scratch, limits=Limits(file_bytes=2**20))
    assert seen == "File too large"
    assert os.path.getsize(os.path.join(scratch, "big")) == 2**20


def family_alive(marker):
    """Processes on this machine whose command line carries ``marker``."""
    alive = []
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/cmdline", "rb") as handle:
                if marker.encode() in handle.read():
                    alive.append(int(name))
        except OSError:
            pass
    return alive


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "no-sandbox"])
def test_stop_ends_setsid_children_and_daemons(ready, scratch, sandboxed):
    marker = f"sandbox-test-{uuid.uuid4().hex}"
    code = f"""
        # {marker}
        import os, signal, sys, time
        def beat(name):
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            while True:
                with open(name, "a") as handle:
                    handle.write(".")
                time.sleep(0.02)
        if os.fork() == 0:
            os.setsid()
            beat("setsid")
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                beat("daemon")
            os._exit(0)
        sys.stdout.write("ready\\n")
        sys.stdout.flush()
        beat("main")
        """
    proc = sandbox.start([sys.executable, "-c", textwrap.dedent(code)], scratch=scratch, sandboxed=sandboxed)
    assert proc.stdout.readline() == b"ready\n"
    beats = [os.path.join(scratch, name) for name in ("setsid", "daemon", "main")]
    deadline = time.monotonic() + 10
    while not all(os.path.exists(path) for path in beats) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert all(os.path.exists(path) for path in beats) and family_alive(marker)
    started = time.monotonic()
    sandbox.stop(proc)
    took = time.monotonic() - started
    assert family_alive(marker) == []
    sizes = [os.path.getsize(path) for path in beats]
    time.sleep(0.2)
    assert [os.path.getsize(path) for path in beats] == sizes   # no heartbeat after stop()
    assert took < 2 and proc.returncode is not None
    sandbox.stop(proc)                                            # idempotent


def test_stop_a_worker_that_ignores_sigterm_and_stdin(ready, scratch):
    code = """
        import signal, sys, time
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)
        sys.stdout.write("ready\\n")
        sys.stdout.flush()
        while True:
            time.sleep(1)
        """
    proc = sandbox.start([sys.executable, "-c", textwrap.dedent(code)], scratch=scratch)
    assert proc.stdout.readline() == b"ready\n"
    started = time.monotonic()
    sandbox.stop(proc, grace_s=0.3)
    assert 0.3 <= time.monotonic() - started < 1.5
    assert proc.returncode is not None
    sandbox.stop(proc, grace_s=0.3)                               # already dead: no error, no wait
    assert time.monotonic() - started < 1.5


RESERVE = """
    import ctypes, json
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    PROT_NONE, MAP_PRIVATE, MAP_ANONYMOUS, MAP_NORESERVE = 0, 0x02, 0x20, 0x4000
    address = libc.mmap(None, 64 * 2**30, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
    print(json.dumps(address not in (None, 2**64 - 1)))
    """


@pytest.mark.parametrize("sandboxed", [True, False], ids=["sandboxed", "no-sandbox"])
def test_a_reservation_of_64_gib_starts_under_the_default_limits(ready, scratch, sandboxed):
    """What CUDA does at start (measured on an NVIDIA H200: it could not start under 8 GiB of RLIMIT_AS): reserve far
    more address space than it touches. Under the default limits (settings.grading.memory_limit_gb of memory
    written, RLIMIT_DATA) a 64 GiB PROT_NONE reservation succeeds; under 8 GiB of RLIMIT_AS, as before, it fails."""
    assert run(RESERVE, scratch, limits=sandbox.default_limits(), sandboxed=sandboxed) is True
    assert run(RESERVE, scratch, limits=Limits(address_space_bytes=8 * GiB), sandboxed=sandboxed) is False


def test_touching_more_than_the_limit_is_stopped(ready, scratch):
    """Memory written a page at a time stops at the limit (1 GiB here: the machine is shared); at the default, a
    9 GiB allocation fails at once."""
    touch = """
        import json
        chunks = []
        try:
            for _ in range(32):
                chunks.append(bytearray(64 * 2**20))     # written: zeroed page by page
        except MemoryError:
            pass
        print(json.dumps(len(chunks) * 64))
        """
    with override({"grading": {"memory_limit_gb": 1}}):
        touched = run(touch, scratch, limits=sandbox.default_limits())
    assert 512 <= touched < 1024
    whole = """
        import json
        try:
            bytearray(9 * 2**30)
            print(json.dumps("allocated"))
        except MemoryError:
            print(json.dumps("MemoryError"))
        """
    assert run(whole, scratch, limits=sandbox.default_limits()) == "MemoryError"


def test_torch_threads_and_loader_workers_run_under_the_default_limits(ready, scratch):
    seen = run("""
        import json, threading, torch
        from torch.utils.data import DataLoader
        torch.set_num_threads(16)
        x = torch.randn(1000, 1000)
        threads = [threading.Thread(target=lambda: (x @ x).sum()) for _ in range(32)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        batches = [b.tolist() for b in DataLoader(list(range(8)), batch_size=4, num_workers=2)]
        data = [line for line in open("/proc/self/status") if line.startswith("VmData")][0].split()[1]
        print(json.dumps({"batches": batches, "data_gib": int(data) / 2**20}))
        """, scratch, limits=sandbox.default_limits(), timeout=120)
    assert seen["batches"] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert seen["data_gib"] < sandbox.MEMORY_BYTES / GiB


def test_stop_lets_a_worker_end_on_eof(ready, scratch):
    proc = sandbox.start([sys.executable, "-c", "import sys; sys.stdin.read()"], scratch=scratch)
    sandbox.stop(proc, grace_s=10)
    assert proc.returncode == 0


def test_probe_says_what_is_missing_without_bwrap(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    code = ("from autograder.sandbox import bubblewrap as sandbox\n"
            "try:\n    sandbox.probe()\nexcept sandbox.SandboxUnavailable as error:\n    print(error)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={"PATH": str(empty), "PYTHONPATH": REPO})
    assert "bubblewrap is not installed" in done.stdout and "apt-get install bubblewrap" in done.stdout


def test_default_limits_follow_the_memory_setting():
    with override({"grading": {"memory_limit_gb": 2}}):
        assert sandbox.default_limits() == Limits(memory_bytes=2 * GiB, total_memory_bytes=2 * GiB)
    with override({"grading": {"memory_limit_gb": 0}}):
        assert sandbox.default_limits().memory_bytes is None and sandbox.default_limits().total_memory_bytes is None


def test_scratch_must_exist(tmp_path):
    with pytest.raises(FileNotFoundError):
        sandbox.command(["true"], scratch=tmp_path / "missing", sandboxed=False)


ORDINARY_USER_CHECKS = """
import json, os, subprocess, sys, time
from autograder.sandbox import bubblewrap as sandbox
scratch = sys.argv[1]
code = '''
import json, os, socket, numpy, autograder   # the venv's site-packages and the package, readable by the user
try:
    open("/x", "w")
    wrote_root = True
except OSError:
    wrote_root = False
open("mine", "w").close()
print(json.dumps({"uid": os.getuid(), "pid": os.getpid(), "interfaces": [n for _, n in socket.if_nameindex()],
                  "wrote_root": wrote_root, "env": sorted(os.environ)}))
'''
done = subprocess.run(sandbox.command([sys.executable, "-c", code], scratch=scratch), capture_output=True, text=True)
inside = json.loads(done.stdout or "null")
marker = "ordinary-user-" + str(os.getpid())
sleeper = "import os, sys, time; os.setsid(); print(flush=True); time.sleep(60) # " + marker
proc = sandbox.start([sys.executable, "-c", sleeper], scratch=scratch)
proc.stdout.readline()
def alive():
    found = 0
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            found += marker.encode() in open(f"/proc/{name}/cmdline", "rb").read()
        except OSError:
            pass
    return found
before = alive()
sandbox.stop(proc)
print(json.dumps({"probe": sandbox.probe(), "grader_uid": os.getuid(), "inside": inside, "stderr": done.stderr,
                  "owner": os.stat(os.path.join(scratch, "mine")).st_uid, "alive": [before, alive()]}))
"""


def test_an_ordinary_user_grader(ready, request):
    """The grader as uid 65534 (not root): bwrap's own user namespace, no setpriv."""
    if not IS_ROOT:
        pytest.skip("this whole file already runs as an ordinary user")
    scratch = tempfile.mkdtemp(prefix="sandbox-user-")   # not under pytest's tmp: its parents are 0700, root's
    os.chown(scratch, 65534, 65534)
    request.addfinalizer(lambda: shutil.rmtree(scratch, ignore_errors=True))
    # A copy of the machine where the interpreter under /root (mode 0700) is readable by uid 65534.
    show = []
    for path in sorted({sys.base_prefix, sys.prefix}):
        if path.startswith("/root/"):
            top = "/root/" + path.split("/")[2]
            show += ["--ro-bind", top, top]
    as_user = [shutil.which("bwrap"), "--dev-bind", "/", "/", "--tmpfs", "/root", *show, "--",
               shutil.which("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups", "--",
               sys.executable, "-c", ORDINARY_USER_CHECKS, scratch]
    done = subprocess.run(as_user, capture_output=True, text=True, timeout=60,
                          env={"PATH": os.environ["PATH"], "PYTHONPATH": REPO, "HOME": scratch})
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["probe"].endswith("user namespace, uid 65534") and "root" not in seen["probe"]
    assert seen["grader_uid"] == 65534
    assert seen["inside"] == {"uid": 65534, "pid": 2, "interfaces": ["lo"], "wrote_root": False,
                              "env": sorted(sandbox.default_env(scratch))}, seen["stderr"]
    assert seen["owner"] == 65534 and seen["alive"][0] > 0 and seen["alive"][1] == 0
