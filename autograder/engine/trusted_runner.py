"""Grade one notebook the trusted way: its code runs in a sandboxed worker, every check runs here.

``grade_cells(topic, cells, seed=..., launcher=...)`` starts a worker, runs the notebook's code cells in it in order
(not the test cells), then grades each of the topic's items with the same checks and
variants as everywhere else, handing each check proxies for the student's objects. A cell
that runs past the cell timeout, or a worker that dies or stops answering, costs what it
costs: the worker is started again and the cells run again for the next item (as a
kernel restarted by nbgrader would), and an item whose worker was lost scores 0 with
the reason. One wall-clock budget (``settings.grading.submission_timeout_s``, ``trusted.budget``) covers the whole
notebook, cells, restarts and items: every request waits at most what is left of it, the worker is killed when it is
spent, and the items not finished score 0 with a message that names the setting and the item that was running.
"""

import atexit
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from autograder.checks import items_of
from autograder.engine.budget import SETTING as BUDGET_SETTING
from autograder.engine.budget import Budget
from autograder.engine.gpu_lease import gpu_lease, gpu_name
from autograder.engine.results import FAILED, GRADER_ERROR, explain, grade_item
from autograder.engine.verdict import Verdict
from autograder.errors import WorkerLost
from autograder.sandbox import bubblewrap as sandbox
from autograder.seam import remote
from autograder.settings import settings
from autograder.source_evidence.submitted_source import Submission


@dataclass
class CellOutcome:
    cell: str            # the cell's grade id (or its position)
    output: str = ""     # what it printed (bounded)
    error: str = ""      # "ValueError: ..." when it raised, or why it was stopped
    error_type: str = ""     # the exception's type when it raised ("ValueError"); "" when stopped or none
    error_message: str = ""  # the exception's message when it raised
    stopped: bool = False    # the grader stopped it (a deadline, the worker died, the budget ran out): see error
    seconds: float = 0.0


@dataclass
class NotebookGrade:
    items: list = field(default_factory=list)     # [Verdict]
    cells: list = field(default_factory=list)     # [CellOutcome] of the first run of the cells
    problems: list = field(default_factory=list)  # what went wrong with the submission, for people
    seconds: float = 0.0                          # wall time of the whole notebook: workers, cells, restarts, items


def plain_launcher(argv, scratch):
    """The worker without a sandbox or its limits, with the grader's environment (the kit's unit tests)."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            cwd=scratch, start_new_session=True, close_fds=True)
    return proc, sandbox.stop


WORKER = [sys.executable, "-m", "autograder.seam.worker"]


class MachineError(sandbox.SandboxUnavailable):
    """The grading machine cannot grade (CUDA does not start in the sandboxed worker, or the worker does not start):
    not the student's failure. Grading stops before anything of the submission is scored; the message names the
    machine's problem and the fix (``cli`` prints it as "Cannot grade: ...")."""


def expects_cuda():
    """Whether the student's worker must start CUDA: ``settings.grading.expect_cuda``, by default whether this
    process sees a GPU (the checks then send CUDA cases). A test sets it on a machine without one: the worker's real
    ``torch.cuda.init()`` fails there, as a broken GPU machine's would."""
    chosen = settings.grading.expect_cuda
    if chosen is None:
        import torch

        return torch.cuda.is_available()
    return bool(chosen)


def worker_argv():
    """The worker's command: with ``--cuda`` where it must start CUDA before any student code (``worker.probe_device``)
    and the share of GPU memory it may take."""
    if not expects_cuda():
        return list(WORKER)
    return [*WORKER, "--cuda", f"--gpu-memory-fraction={settings.grading.gpu_memory_fraction:g}"]


def check_device(session, what="the worker that runs the student's code"):
    """The worker's own report of its device, read before any student code runs in it (a student's code cannot make
    the machine look broken, nor hide a machine that is); :class:`MachineError` where it must have CUDA and has not,
    or where it ends before it answers."""
    cuda_wanted = "--cuda" in getattr(session, "argv", ())
    try:
        answer = session.request("device", timeout=settings.grading.cell_timeout_s + 60)
    except WorkerLost as lost:
        if session.budget is not None and session.budget.spent():
            raise
        raise MachineError(f"the grading machine cannot grade: {what} ended before any student code ran ({lost}). "
                           "Nothing was scored. Check the sandbox on this machine (python -m autograder grade "
                           "prints what bwrap lacks), and that torch imports within its memory limit "
                           "(settings.grading.memory_limit_gb); then grade again.") from None
    device = answer.get("ok") if isinstance(answer.get("ok"), dict) else {}
    if cuda_wanted and not device.get("cuda"):
        why = ("settings.grading.expect_cuda is set" if settings.grading.expect_cuda
               else "the grading process sees a GPU")
        raise MachineError(f"the grading machine cannot grade: {why}, but CUDA does not start in {what} "
                           f"({device.get('error') or 'no answer from its probe'}). Nothing was scored: not the "
                           "students' failure. Fix the machine (the NVIDIA driver and /dev/nvidia* inside the sandbox, "
                           "the sandbox's limits: settings.grading.memory_limit_gb, "
                           "settings.grading.gpu_memory_fraction) and grade again; or grade without the GPU "
                           "(CUDA_VISIBLE_DEVICES= in the grader's environment: the GPU-only items stay pending).")
    return device


def sandbox_launcher(argv, scratch):
    """The worker in the sandbox (``autograder.sandbox.bubblewrap``): no network, its own PID namespace, no view of
    the course, limits, nothing of the grader's environment (``sandbox.default_env``: the worker judges nothing,
    so it needs no settings and no seed); every process in it ends with it."""
    proc = sandbox.start(argv, scratch=scratch, limits=sandbox.default_limits())
    return proc, sandbox.stop


def unsandboxed_launcher(argv, scratch):
    """``--no-sandbox``: for a trusted machine only; the records say so."""
    proc = sandbox.start(argv, scratch=scratch, limits=sandbox.default_limits(), sandboxed=False)
    return proc, sandbox.stop


def quiet_profiler():
    """Keep torch.profiler's own lines off the instructor's terminal: the memory checks' oracle profiles in this
    process, and PyTorch's profiler library writes "USDT: ... profiler_start/profiler_stop" for every profile, and
    "ERROR: External init callback must run in same thread as registerClient" where the first profile runs in another
    thread than the one that imported torch (a Dask worker's), straight to file descriptor 2. Its log level is read
    when it first starts, so this sets it (unless the environment does) and starts it here, in the thread that
    imports the grader (and torch with it)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    os.environ.setdefault("KINETO_LOG_LEVEL", "6")     # above its highest level: nothing
    with profile(activities=[ProfilerActivity.CPU]):
        torch.zeros(1).add_(1)


quiet_profiler()

TRUSTED_PROBLEM = "Trusted grading problem:"   # how TrustedExecute logs a problem with a submission, for the report


_FALLBACK = {"launcher": None, "forced": False}   # set by use_fallback: the Gradescope runner's, or a test's


def use_fallback(launcher, *, forced=False):
    """Where bwrap cannot make a sandbox, grade with ``launcher`` (the fallback sandbox of a Gradescope bundle: an
    unprivileged user, no namespaces) instead of stopping; ``forced``: use it even where bwrap works (the adversarial
    suite's run against the fallback). ``use_fallback(None)`` puts the default back: stop where bwrap cannot."""
    _FALLBACK.update(launcher=launcher, forced=bool(launcher) and forced)


def launcher_for(confined):
    """The sandboxed launcher, or the unsandboxed one when not ``confined``; stops with ``SandboxUnavailable`` (and
    what to do) where no sandbox can be made (``sandbox.probe``, once per process), unless a fallback was given
    (:func:`use_fallback`)."""
    if not confined:
        return unsandboxed_launcher
    fallback = _FALLBACK["launcher"]
    if fallback is not None and _FALLBACK["forced"]:
        return fallback
    try:
        sandbox.probe()
    except sandbox.SandboxUnavailable:
        if fallback is None:
            raise
        return fallback
    return sandbox_launcher


_CLEAN = {}   # launcher -> the clean worker of this grading process


def clean_worker(launcher):
    """A worker in which no student code ever runs: it times the baselines of the speed checks. One per grading
    process, shared by every notebook (no student reaches it), started on first use and ended at exit."""
    session = _CLEAN.get(launcher)
    argv = worker_argv()
    if session is None or session.lost or session.argv != argv:
        if session is not None:
            session.close()
        scratch = tempfile.mkdtemp(prefix="epl-clean-")
        # a launcher may start it as a user of its own (the fallback sandbox, where no pid namespace keeps a student's
        # worker from signalling it)
        proc, stop = getattr(launcher, "clean", launcher)(argv, scratch)
        session = remote.Session(proc, stop=stop)
        session.argv = argv
        atexit.register(session.close)
        atexit.register(shutil.rmtree, scratch, True)
        check_device(session, "the clean worker that times the baselines")
        _CLEAN[launcher] = session
    return session


_AHEAD = {}   # launcher -> (proc, stop, scratch): a worker started ahead, importing torch while the grader works


def _started_as():
    """What a worker started ahead must have been started with to serve now: its command and the sandbox's limits
    (a worker started under other settings is ended, and a new one started)."""
    return worker_argv(), sandbox.default_limits()


def _launch(launcher):
    scratch = tempfile.mkdtemp(prefix="epl-worker-")
    argv = worker_argv()
    proc, stop = launcher(argv, scratch)
    proc.argv, proc.started_as = argv, _started_as()
    return proc, stop, scratch


def _end(proc, stop, scratch):
    stop(proc)
    shutil.rmtree(scratch, ignore_errors=True)


def started_ahead(launcher):
    """A fresh worker with its own scratch directory, ``(proc, stop, scratch)``: the one started ahead when there is
    one. Each worker serves one notebook only; the one left over ends with this process."""
    spare = _AHEAD.pop(launcher, None)
    if spare is None or spare[0].poll() is not None or getattr(spare[0], "started_as", None) != _started_as():
        if spare is not None:
            _end(*spare)
        spare = _launch(launcher)
    return spare


def start_next_ahead(launcher):
    """Start the next notebook's worker now, so that it imports torch (and starts CUDA) while this one is graded.
    Called once this notebook's worker has answered, not beside it: a grading process that starts two at once at
    the start of a batch, 16 of them on 16 cores, starts 32 at once. A process that grades one notebook and exits
    (``run_autograder``, the last jobs of a local cluster) starts none: a worker for a notebook that never comes
    imports torch for nothing (1.5 to 2 s of CPU per run)."""
    if launcher not in _AHEAD:
        _AHEAD[launcher] = _launch(launcher)


@atexit.register
def _end_spares():
    while _AHEAD:
        _end(*_AHEAD.popitem()[1])


class NotebookWorker:
    """The worker for one notebook: started on demand, the cells run once per start.

    With a ``scratch`` directory every worker runs there; without one, each worker is taken from those started
    ahead (:func:`started_ahead`; ``start_next``: and the next started ahead once it answers) with a scratch directory of its own,
    removed when it ends."""

    def __init__(self, cells, launcher, scratch=None, budget=None, start_next=True):
        self.cells = list(cells)
        self.launcher = launcher
        self.scratch = scratch
        self.start_next = start_next
        self.budget = budget      # the notebook's wall-clock budget (trusted.budget.Budget): no restart past it
        self.session = None
        self.loader = None          # the fresh worker for calls that must not see the checks' earlier calls
        self.starts = 0
        self.first_run = []
        self._scratches = []
        self.memory_bound = ""    # what bounded the memory of the worker's processes (sandbox.start says)
        self.device = {}          # the worker's device, as it reported before any student code ran (check_device)
        self.machine_error = None # a MachineError met starting a worker

    def live(self):
        if self.session is None or self.session.lost:
            if self.budget is not None and self.budget.spent():
                raise WorkerLost(self.budget.why(), timed_out=True)
            self._start()
        return self.session

    def _start(self):
        self.session = self._new_session()
        self.starts += 1
        outcomes = []
        running = self.budget.running if self.budget is not None else ""
        for cell_id, source in self.cells:
            started = time.perf_counter()
            outcome = CellOutcome(cell_id)
            if self.budget is not None:
                self.budget.running = f"cell {cell_id} (run #{self.starts})" + (f" for {running}" if running else "")
            try:
                answer = self.session.request("cell", source, timeout=settings.grading.cell_timeout_s + 60 * (
                    self.starts == 1 and not outcomes))   # the first cell also waits for torch to import
                result = answer.get("ok") or {}
                outcome.output = str(result.get("output", ""))[:20_000]
                if result.get("error"):
                    error = result["error"]
                    outcome.error = f"{error.get('type')}: {error.get('message')}"
                    outcome.error_type, outcome.error_message = str(error.get("type")), str(error.get("message"))
            except WorkerLost as lost:
                outcome.stopped = True
                if self.budget is not None and self.budget.spent():
                    outcome.error = f"stopped: {lost} (in cell {cell_id}, run #{self.starts})"
                    outcome.seconds = time.perf_counter() - started
                    outcomes.append(outcome)
                    break                                # no worker is started again past the budget
                if lost.timed_out:
                    outcome.error = (f"stopped: cell {cell_id} ran longer than {settings.grading.cell_timeout_s} s "
                                     "and was stopped; a fresh worker ran the cells after it")
                else:
                    outcome.error = (f"stopped: the worker died in cell {cell_id} ({lost}); a fresh worker ran the "
                                     "cells after it")
                self.session = self._new_session()   # a fresh worker runs the cells after it, as a new kernel would
            outcome.seconds = time.perf_counter() - started
            outcomes.append(outcome)
        if self.starts == 1:
            self.first_run = outcomes
        if self.budget is not None and not self.budget.spent():
            self.budget.running = running

    def _new_session(self):
        if self.scratch is not None:
            argv = worker_argv()
            proc, stop = self.launcher(argv, self.scratch)
        else:
            proc, stop, scratch = started_ahead(self.launcher)
            argv = proc.argv
            self._scratches.append(scratch)
        self.memory_bound = getattr(proc, "memory_bound", "none: the worker ran without the sandbox's limits")
        session = remote.Session(proc, stop=stop, spawn=self._clean_twin, fresh=self.fresh_process)
        session.budget, session.argv = self.budget, argv
        try:
            self.device = check_device(session)
        except MachineError as error:
            session.close()
            self.machine_error = error     # grade_cells stops with it even where a check caught it
            raise
        if self.scratch is None and self.start_next:
            start_next_ahead(self.launcher)
        return session

    def _clean_twin(self):
        """The clean worker that times baselines, its requests bounded by this notebook's budget too (once spent, it
        is killed and the next notebook starts another)."""
        try:
            twin = clean_worker(self.launcher)
        except MachineError as error:
            self.machine_error = error
            raise
        twin.budget = self.budget
        return twin

    def fresh_process(self):
        """A second worker for this notebook that ran its cells and nothing else (``remote.in_fresh_process``: a
        checkpoint is loaded there, in a process that never ran the save). Started on first use, kept for the
        notebook; a cell that fails there fails as it did in the first run; a lost worker is started again. Its
        requests count against the notebook's budget like the first worker's."""
        if self.loader is None or self.loader.lost:
            session = self._new_session()
            for _, source in self.cells:
                session.request("cell", source, timeout=settings.grading.cell_timeout_s + 60)
            self.loader = session
        return self.loader

    def close(self):
        if self.loader is not None:
            self.loader.close()
        if self.session is not None:
            self.session.close()
        for scratch in self._scratches:
            shutil.rmtree(scratch, ignore_errors=True)


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
        found = answer.get("ok")
        if remote.is_remote(found):
            object.__setattr__(found, "_source", name)    # so that a fresh worker can find it (in_fresh_process)
        return found


@contextlib.contextmanager
def gpu_turn(budget, *, timed):
    """Where the student's worker uses CUDA, hold its GPU's lease (``gpu_lease``) for the block: exclusive for an item
    timed on it (``clock`` among its evidence: nothing else runs on that GPU meanwhile), shared for the rest of the
    notebook's work (its cells, its other items: beside other notebooks' untimed work, never beside a timing). The wait
    is given back to the notebook's budget. Without CUDA it runs at once."""
    if not expects_cuda():
        yield
        return
    with gpu_lease(gpu_name(), exclusive=timed) as waited:
        budget.ends += waited
        yield


def memory_note():
    """What a student's MemoryError means in the sandbox: their code's own memory use, and the limit."""
    limit = settings.grading.memory_limit_gb
    return (f"Your code used more memory than the grader gives each process ({limit:g} GiB written, "
            "settings.grading.memory_limit_gb): look for a tensor far larger than the exercise needs.")


def out_of_time(item, budget=None):
    limit = settings.grading.submission_timeout_s if budget is None else budget.seconds
    running = f" ({budget.running} was running when it ran out)" if budget is not None and budget.running else ""
    return Verdict(item.id, item.name, FAILED, 0.0, item.points,
                      f"[{item.name}] not graded: the notebook used up its {limit:g} s of grading time "
                      f"({BUDGET_SETTING}) before this item{running}.")


def stopped_by_budget(item, result, budget):
    """``result`` of the item that was running when the budget ran out: 0, saying so (the worker was killed)."""
    result.status, result.score = FAILED, 0.0
    result.message = (f"[{item.name}] not finished: the notebook's grading time of {budget.seconds:g} s "
                      f"({BUDGET_SETTING}) ran out while this item was being graded; the worker running your code "
                      "was stopped.")
    return result


def grade_cells(topic, cells, *, seed, launcher, only=None, ahead=False, last=False):
    """Grade ``cells`` (``[(cell id, source)]``, the notebook's code cells but the tests) for ``topic``.

    ``ahead``: take the worker from those started ahead, and start the next (batch grading: each notebook's worker
    has imported torch while the one before was graded); ``last``: this process grades no other notebook, so none is
    started for the next (a worker it needs again, a restart or a fresh process, starts when needed)."""
    grade = NotebookGrade()
    budget = Budget(settings.grading.submission_timeout_s)
    with tempfile.TemporaryDirectory(prefix="epl-worker-") as scratch:
        worker = NotebookWorker(cells, launcher, None if ahead else scratch, budget=budget, start_next=not last)
        try:
            with gpu_turn(budget, timed=False):
                worker.live()  # started, its device checked (MachineError: nothing scored) and the cells run
            namespace = RemoteNamespace(worker)
            source = Submission.from_cells(cells)    # what the grader reads: the student cannot change it
            for item in items_of(topic):
                if only is not None and item.id not in only:
                    continue
                if budget.spent():
                    result = out_of_time(item, budget)
                else:
                    budget.running = item.name
                    with gpu_turn(budget, timed="clock" in item.evidence):
                        result = grade_item(item, namespace, seed=seed, source=source)
                    if worker.machine_error is not None:    # a worker started again for this item could not start
                        raise worker.machine_error
                    if result.status == FAILED and budget.spent():
                        result = stopped_by_budget(item, result, budget)
                    elif result.status == FAILED and result.kind == "raised: MemoryError":
                        result.message += " " + memory_note()
                    elif result.status == GRADER_ERROR and "MemoryError" in result.detail:
                        grade.problems.append(f"{item.name}: the grader ran out of its memory limit "
                                              "(settings.grading.grader_memory_gb) while grading it")
                if worker.memory_bound:
                    result.evidence["sandbox_memory"] = worker.memory_bound
                grade.items.append(result)
        finally:
            worker.close()
        grade.cells = worker.first_run
        grade.seconds = budget.elapsed()
    explain(topic, grade.items, whole=only is None and not budget.spent())
    for outcome in grade.cells:
        if outcome.stopped:
            grade.problems.append(outcome.error.removeprefix("stopped: "))
    if budget.spent():
        grade.problems.append(f"its grading time of {budget.seconds:g} s ({BUDGET_SETTING}) ran out"
                              + (f" while {budget.running} was running" if budget.running else "")
                              + ": the worker was stopped and the items not finished score 0")
    if worker.starts > 1:
        grade.problems.append(f"the notebook's code was run {worker.starts} times: a worker was lost "
                              "(a hang, a crash or running out of memory) and started again")
    return grade
