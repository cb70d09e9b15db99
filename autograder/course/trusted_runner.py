"""Grade one notebook the trusted way: its code runs in a sandboxed worker, every check runs here.

``grade_cells(topic, cells)`` starts a worker, runs the notebook's code cells in it in order
(not the test cells), then grades each of the topic's items with the same checks and
variants as everywhere else, handing each check proxies for the student's objects. A cell
that runs past the cell timeout, or a worker that dies or stops answering, costs what it
costs: the worker is started again and the cells run again for the next item (as a
kernel restarted by nbgrader would), and an item whose worker was lost scores 0 with
the reason.
"""

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from ..checks import items_of
from ..settings import settings
from ..trusted import remote
from . import notebooks
from .results import grade_item

# The topics graded this way (their checks take remote objects and were proved so: tests/trusted); the others
# still run in a kernel until theirs are (docs/security.md).
TRUSTED_TOPICS = ("basics", "modules", "broadcasting", "operators", "vectorization", "dataloading", "stability",
                  "amp")


@dataclass
class CellOutcome:
    cell: str            # the cell's grade id (or its position)
    output: str = ""     # what it printed (bounded)
    error: str = ""      # "ValueError: ..." when it raised, or why it was stopped
    seconds: float = 0.0


@dataclass
class NotebookGrade:
    items: list = field(default_factory=list)     # [ItemResult]
    cells: list = field(default_factory=list)     # [CellOutcome] of the first run of the cells
    problems: list = field(default_factory=list)  # what went wrong with the submission, for people


def plain_launcher(argv, scratch):
    """The worker without a sandbox (``--no-sandbox``, and the kit's unit tests): a process group we kill."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            cwd=scratch, start_new_session=True, close_fds=True)
    return proc, _kill_group


def _kill_group(proc):
    import os
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    for stream in (proc.stdin, proc.stdout):
        try:
            stream.close()
        except OSError:
            pass


WORKER = [sys.executable, "-m", "autograder.trusted.worker"]


def sandbox_launcher(argv, scratch):
    """The worker in the sandbox (``autograder.trusted.sandbox``): no network, its own PID namespace, no view of
    the course, limits; every process in it ends with it."""
    from ..trusted import sandbox

    proc = sandbox.start(argv, scratch=scratch, env=_worker_env(scratch))
    return proc, sandbox.stop


def unsandboxed_launcher(argv, scratch):
    """``--no-sandbox``: for a trusted machine only; the records say so."""
    from ..trusted import sandbox

    proc = sandbox.start(argv, scratch=scratch, env=_worker_env(scratch), sandboxed=False)
    return proc, sandbox.stop


def _worker_env(scratch):
    # Nothing of the grader's environment: the worker judges nothing, so it needs no settings and no seed.
    return {"PATH": "/usr/bin:/bin", "HOME": scratch, "TMPDIR": scratch, "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "PYTHONPATH": _package_root()}


def _package_root():
    import autograder

    return os.path.dirname(os.path.dirname(os.path.abspath(autograder.__file__)))


NO_SANDBOX_ENV = "AUTOGRADER_NO_SANDBOX"   # "1": `grade --no-sandbox` (set by the grader for its nbgrader runs)


def sandboxed():
    """Whether student code runs in the sandbox: ``settings.grading.sandbox`` unless ``grade --no-sandbox``."""
    return settings.grading.sandbox and os.environ.get(NO_SANDBOX_ENV) != "1"


def launcher_from_settings():
    """The sandboxed launcher, or the plain one under ``--no-sandbox``; stops with ``SandboxUnavailable`` (and
    what to do) where no sandbox can be made."""
    from ..trusted import sandbox

    if not sandboxed():
        return unsandboxed_launcher
    sandbox.probe()
    return sandbox_launcher


def notebook_cells(nb, topic):
    """``[(cell key, source)]``: every code cell of ``nb`` but the topic's graded test cells, in order; the key is
    the cell's grade id or ``cell <index>``."""
    tests = {item.cell_id for item in items_of(topic)}
    return [(notebooks.grade_id(cell) or f"cell {index}", notebooks.source_text(cell))
            for index, cell in enumerate(nb["cells"])
            if cell.get("cell_type") == "code" and notebooks.grade_id(cell) not in tests]


class NotebookWorker:
    """The worker for one notebook: started on demand, the cells run once per start."""

    def __init__(self, cells, launcher, scratch):
        self.cells = list(cells)
        self.launcher = launcher
        self.scratch = scratch
        self.session = None
        self.starts = 0
        self.first_run = []

    def live(self):
        if self.session is None or self.session.lost:
            self._start()
        return self.session

    def _start(self):
        self.session = self._new_session()
        self.starts += 1
        outcomes = []
        for cell_id, source in self.cells:
            started = time.perf_counter()
            outcome = CellOutcome(cell_id)
            try:
                answer = self.session.request("cell", source, timeout=settings.grading.cell_timeout_s + 60 * (
                    self.starts == 1 and not outcomes))   # the first cell also waits for torch to import
                result = answer.get("ok") or {}
                outcome.output = str(result.get("output", ""))[:20_000]
                if result.get("error"):
                    error = result["error"]
                    outcome.error = f"{error.get('type')}: {error.get('message')}"
            except remote.WorkerLost as lost:
                outcome.error = f"stopped: {lost}"
                self.session = self._new_session()   # a fresh worker runs the cells after it, as a new kernel would
            outcome.seconds = time.perf_counter() - started
            outcomes.append(outcome)
        if self.starts == 1:
            self.first_run = outcomes

    def _new_session(self):
        proc, stop = self.launcher(WORKER, self.scratch)
        return remote.Session(proc, stop=stop, spawn=self._new_session)

    def close(self):
        if self.session is not None:
            self.session.close()


class RemoteNamespace(dict):
    """The student's names, looked up in the worker (a missing name is missing, as in a kernel)."""

    def __init__(self, worker):
        super().__init__()
        self.worker = worker

    def __contains__(self, name):
        try:
            self[name]
        except KeyError:
            return False
        return True

    def __getitem__(self, name):
        answer = self.worker.live().request("lookup", name, timeout=settings.call_timeout_s)
        if "raised" in answer:
            raise KeyError(name)
        return answer.get("ok")


def grade_cells(topic, cells, *, seed, launcher=plain_launcher, only=None):
    """Grade ``cells`` (``[(cell id, source)]``, the notebook's code cells but the tests) for ``topic``."""
    grade = NotebookGrade()
    with tempfile.TemporaryDirectory(prefix="epl-worker-") as scratch:
        worker = NotebookWorker(cells, launcher, scratch)
        try:
            namespace = RemoteNamespace(worker)
            for item in items_of(topic):
                if only is not None and item.id not in only:
                    continue
                grade.items.append(grade_item(item, namespace, seed=seed))
        finally:
            worker.close()
        grade.cells = worker.first_run
    for outcome in grade.cells:
        if outcome.error.startswith("stopped:"):
            grade.problems.append(f"cell {outcome.cell} {outcome.error.removeprefix('stopped: ')}")
    if worker.starts > 1:
        grade.problems.append(f"the notebook's code was run {worker.starts} times: a worker was lost "
                              "(a hang, a crash or running out of memory) and started again")
    return grade
