"""Grading a whole class: jobs out to graders (this process, or Dask workers), results back, one writer.

``grade_batch`` plans every ``(student, assignment)`` pair, sends one job per submission that needs grading to an
executor, and writes the results into nbgrader's gradebook from this process alone, in the order of the pairs, so
that a grade never depends on which worker finished first:

* **Executors.** :class:`InlineExecutor` grades here, one job after another (``--workers 0``).
  :class:`DaskExecutor` sends jobs to Dask distributed: a local cluster of ``--workers N`` processes (one per core
  by default), or an existing cluster (``--scheduler tcp://HOST:8786``). Workers get the notebook's bytes and
  return plain data (``jobs.grade_job``); they need no course directory and no gradebook.
* **GPU items.** A job graded where there is no CUDA leaves the GPU items pending. Where the cluster has a worker
  started with ``--resources GPU=1``, a second job grades just those items there (Dask resource ``GPU=1``), and the
  two results are merged. Without one they stay pending; ``grade --pending`` completes them later.
* **Nothing lost, nothing graded twice.** Every finished result is kept at once, atomically, in
  ``grading-results/<student>/<assignment>.json`` with the notebook's content hash (its bytes and the grader's
  checks and settings, ``jobs.submission_digest``), before it is written to the gradebook; the report records
  the same hash. A rerun after a kill (of this process or of a worker) skips what was recorded with the same hash,
  writes what was graded but not yet recorded, and grades the rest: what is missing, failed, or changed since.
  A Dask worker that dies mid-job has the job retried once elsewhere (``allowed-failures: 1``), then it is an
  error with the reason.
* **Progress.** A bar with counts, rate and ETA on a terminal (tqdm), a line per submission, and a summary.
"""

import collections
import logging
import os
import sys
import time

from ..errors import ClusterUnavailable
from ..settings import as_dict as settings_now
from ..engine import jobs
from .grading import (autograde, inspect_submission, load_report, record_error, result_of, result_now, save_report,
                      settle_lateness, submission_path)
from ..engine.records import KeptResults


# ------------------------------------------------------------------ executors

class InlineExecutor:
    """Grades each job in this process, when its result is asked for."""

    workers = 1
    name = "this process, one at a time"

    def __init__(self):
        self.queue = collections.deque()
        self.gpu = jobs.cuda_here()

    def submit(self, tag, job, gpu=False):
        self.queue.append((tag, job))

    def __len__(self):
        return len(self.queue)

    def next_done(self):
        tag, job = self.queue.popleft()
        try:
            return tag, jobs.grade_job(job), None
        except Exception as error:  # noqa: BLE001 - recorded as the submission's error, grading goes on
            return tag, None, f"{type(error).__name__}: {error}"

    def close(self):
        pass


# A worker that dies mid-job has the job retried once on another worker, then it fails (KilledWorker). Dask counts
# a death against every task assigned to the worker, so no more jobs are in flight than the workers have threads
# (grade_batch's window): a job is not queued on a worker behind one that kills it. The local cluster's scheduler
# runs in the grader's process and takes this; a scheduler started elsewhere takes its own configuration
# (DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES=1 in its environment).
SCHEDULER_CONFIG = {"distributed.scheduler.allowed-failures": 1}


class DaskExecutor:
    """Jobs on Dask distributed: a local cluster of ``workers`` processes, or the cluster at ``scheduler``."""

    def __init__(self, workers=None, scheduler=None, task=None):
        import dask
        from distributed import Client, LocalCluster, as_completed

        self.task = task or dask_grade_job
        self.cluster = None
        self.environ = dict(os.environ)   # a local cluster's nannies set theirs here (OMP_NUM_THREADS=1, ...)
        dask.config.set(SCHEDULER_CONFIG)
        dask.config.set({"distributed.worker.daemon": False})   # workers start processes (the sandboxed ones)
        if scheduler:
            try:
                _reachable(scheduler)
                self.client = Client(scheduler, timeout="20s")
                self.client.wait_for_workers(1, timeout=60)
            except (OSError, TimeoutError) as error:
                raise ClusterUnavailable(f"the Dask scheduler at {scheduler} cannot be reached, or no worker joined "
                                         f"it within a minute ({type(error).__name__}: {error}). Start one with "
                                         f"`dask worker {scheduler} --nthreads 1`.") from None
            self.name = f"the Dask cluster at {scheduler}"
        else:
            workers = workers or os.cpu_count() or 1
            gpu = {"resources": {"GPU": 1}} if jobs.cuda_here() else {}
            self.cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                        dashboard_address=None, silence_logs=logging.ERROR, **gpu)
            self.client = Client(self.cluster)
            self.name = f"{workers} local Dask worker{'s' * (workers != 1)}"
        info = self.client.scheduler_info(n_workers=-1)["workers"]
        self.workers = max(1, sum(w.get("nthreads", 1) for w in info.values()))   # jobs at once
        self.gpu = any((w.get("resources") or {}).get("GPU", 0) >= 1 for w in info.values())
        self.done = as_completed()
        self.tags = {}

    def check_sandbox(self):
        """Every worker can make the sandbox (else: stop before grading anything, naming the worker)."""
        from ..trusted.sandbox import SandboxUnavailable

        answers = self.client.run(_probe_quietly)
        failed = {address: why for address, why in answers.items() if why}
        if failed:
            raise SandboxUnavailable("; ".join(f"worker {a}: {why}" for a, why in sorted(failed.items())))

    def submit(self, tag, job, gpu=False):
        future = self.client.submit(self.task, job, pure=False, resources={"GPU": 1} if gpu else None,
                                    key=f"grade-{job.student}-{job.assignment}-{'gpu' if gpu else 'all'}-"
                                        f"{time.monotonic_ns()}")
        self.tags[future.key] = tag
        self.done.add(future)

    def __len__(self):
        return self.done.count()

    def next_done(self):
        from distributed.scheduler import KilledWorker

        future = next(self.done)
        tag = self.tags.pop(future.key)
        try:
            return tag, future.result(), None
        except KilledWorker as killed:
            return tag, None, (f"the grading worker died twice while grading it (it was retried once on another "
                               f"worker; Dask: {killed})")
        except Exception as error:  # noqa: BLE001
            return tag, None, f"{type(error).__name__} on the grading worker: {error}"
        finally:
            future.release()

    def close(self):
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()
        os.environ.clear()
        os.environ.update(self.environ)


def dask_grade_job(job):
    """``jobs.grade_job`` on a Dask worker, the result naming the worker by its address."""
    from distributed import get_worker

    data = jobs.grade_job(job)
    data["worker"] = get_worker().address
    return data


def _reachable(address):
    """Fail at once, not after Dask's retries, where nothing listens at ``tcp://HOST:PORT``."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if parts.scheme == "tcp" and parts.hostname and parts.port:
        socket.create_connection((parts.hostname, parts.port), timeout=10).close()


def _probe_quietly():
    from ..trusted.sandbox import SandboxUnavailable, probe

    try:
        probe()
    except SandboxUnavailable as error:
        return str(error)
    return ""


def executor_for(workers, scheduler, planned):
    """``--workers 0`` (or a single job and no cluster named): grade here; else Dask."""
    if scheduler or (workers != 0 and planned > 1):
        return DaskExecutor(workers, scheduler)
    return InlineExecutor()


# ------------------------------------------------------------------ progress

class Progress:
    """A line per submission (with counts and ETA), through ``out``; a tqdm bar too where stderr is a terminal."""

    def __init__(self, total, out, bar=None):
        self.total, self.out, self.done, self.started = total, out, 0, time.perf_counter()
        self.graded = 0
        bar = out is print and sys.stderr.isatty() if bar is None else bar
        self.bar = None
        if bar and out:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="notebook", dynamic_ncols=True, file=sys.stderr, smoothing=0.1)

    def say(self, text):
        if not self.out:
            return
        if self.bar is not None:
            self.bar.write(text)
        else:
            self.out(text, flush=True)

    def step(self, text, graded=True):
        self.done += 1
        self.graded += graded
        if self.bar is not None:
            self.bar.update(1)
        self.say(f"[{self.done}/{self.total}] {text}{self.eta()}")

    def eta(self):
        elapsed = time.perf_counter() - self.started
        left = self.total - self.done
        if not self.graded or not left:
            return f" ({elapsed:.0f} s elapsed)"
        return f" ({elapsed:.0f} s elapsed, about {_duration(elapsed / self.graded * left)} left)"

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _duration(seconds):
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# ------------------------------------------------------------------ the batch

class Plan:
    """One submission's way through the batch: ``action`` is "keep" (recorded before, unchanged), "record" (write
    what is known: a kept result, or a missing or unreadable submission), "grade" (a job for every item), "gpu"
    (a job on a GPU worker for the items a kept result left pending) or "grade-gpu" (a job for every item, on a
    GPU worker)."""

    def __init__(self, index, student, assignment):
        self.index, self.student, self.assignment = index, student, assignment
        self.status, self.problems = "graded", []
        self.data = None        # the notebook's bytes
        self.digest = ""
        self.recorded = None    # its record in the report, when that has the same content hash
        self.result = None      # its graded result (jobs.grade_job's data): kept from before, or once graded
        self.error = None       # why it could not be graded
        self.action = "record"

    @property
    def key(self):
        return f"{self.student}/{self.assignment}"

    @property
    def pending(self):
        return bool(self.recorded.pending if self.recorded is not None else
                    self.result is not None and jobs.pending_items(self.result))


def _look(course, plan, report, store, grader):
    """What is known of ``plan``'s submission: readable or not, its content hash (with ``grader``, the
    ``jobs.grader_digest`` of its assignment), its record and kept result."""
    plan.status, plan.problems = inspect_submission(course, plan.student, plan.assignment)
    if plan.status != "graded":
        return          # missing, or unreadable or too big: recorded again as such, with the reason (cheap)
    plan.data = submission_path(course, plan.student, plan.assignment).read_bytes()
    plan.digest = jobs.submission_digest(plan.data, grader)
    record = report.get(plan.key)
    if record and record.get("digest") == plan.digest and record.get("status") == "graded":
        plan.recorded = result_of(record)
    plan.result = store.get(plan.student, plan.assignment, plan.digest)


def _decide(plan, force, gpu):
    if plan.status != "graded":
        return "record"
    if force:
        plan.recorded = plan.result = None
        return "grade"
    if plan.recorded is not None:
        if not (plan.recorded.pending and gpu):
            return "keep"
        return "gpu" if plan.result is not None else "grade-gpu"
    if plan.result is not None:
        return "gpu" if gpu and jobs.pending_items(plan.result) else "record"
    return "grade"


def grade_batch(course, pairs, *, seed, sandbox, progress=print, workers=0, scheduler=None, force=False,
                only_pending=False, executor=None, register=None):
    """Grade ``pairs`` (see the module's docstring); returns a ``SubmissionResult`` per pair, in order.

    ``register()`` puts the assignments in the gradebook, once the executor is there (a cluster that cannot be
    reached stops the run before that)."""
    started = time.perf_counter()
    report = load_report(course)
    store = KeptResults(course)
    plans = [Plan(i, s, a) for i, (s, a) in enumerate(pairs)]
    graders = {a: jobs.grader_digest(a) for a in {p.assignment for p in plans}}
    for plan in plans:
        _look(course, plan, report, store, graders[plan.assignment])
    if only_pending:
        plans = [p for p in plans if p.status == "graded" and p.pending]
    own = executor is None
    if own:
        need = sum(p.status == "graded" and (force or (p.recorded is None and p.result is None)) for p in plans)
        executor = executor_for(workers, scheduler, need + (only_pending and bool(plans)))
    for plan in plans:
        plan.action = _decide(plan, force, executor.gpu)
    out = Progress(sum(p.action != "keep" for p in plans), progress)
    results = {}
    sources, checks, settings = {}, {}, settings_now()    # what every job of an assignment carries alike

    def job(plan, only=None):
        if plan.assignment not in sources:
            sources[plan.assignment] = jobs.source_map(course, plan.assignment)
            checks[plan.assignment] = jobs.checks_digest(plan.assignment)
        return jobs.Job(plan.student, plan.assignment, plan.data, sources[plan.assignment], seed, sandbox, only,
                        settings, checks[plan.assignment])

    def send(plan):
        if plan.action == "gpu":
            executor.submit(plan.index, job(plan, jobs.pending_items(plan.result)), gpu=True)
        else:
            executor.submit(plan.index, job(plan), gpu=plan.action == "grade-gpu")

    try:
        todo = [p for p in plans if p.action in ("grade", "gpu", "grade-gpu")]
        if sandbox and todo and isinstance(executor, DaskExecutor):
            executor.check_sandbox()
        if register is not None:
            register()
        if progress:
            confined = "students' code sandboxed" if sandbox else "NO SANDBOX: students' code ran unconfined"
            gpu = ", with a GPU" if executor.gpu else ""
            out.say(f"Grading {len(plans)} submissions with {executor.name}{gpu} (hidden-test seed {seed}; "
                    f"{confined})")
            kept = sum(p.action == "keep" for p in plans)
            if kept:
                out.say(f"{kept} unchanged since they were recorded (same notebook, checks and settings): kept; "
                        "--force grades them again")
        if only_pending and not executor.gpu:
            out.say(f"No GPU to grade them: {len(plans)} submission(s) stay pending (run this on a machine with a "
                    "GPU, or pass --scheduler with a Dask worker started with --resources GPU=1)")
            return [p.recorded or result_of(report[p.key]) for p in plans if p.recorded or p.key in report]

        window = executor.workers      # no job waits on a worker (SCHEDULER_CONFIG); the rest wait here
        waiting = collections.deque(todo)
        ready = {p.index for p in plans if p.action in ("keep", "record")}
        by_index = {p.index: p for p in plans}
        state = {"written": 0, "saved": time.monotonic()}

        def write_ready():
            while state["written"] < len(plans) and plans[state["written"]].index in ready:
                plan = plans[state["written"]]
                results[plan.index] = _write(course, plan, seed, sandbox, out)
                state["written"] += 1
                if time.monotonic() - state["saved"] > 2:
                    save_report(course)
                    state["saved"] = time.monotonic()

        def refill():
            while waiting and len(executor) < window:
                send(waiting.popleft())

        write_ready()
        while waiting or len(executor):
            refill()
            index, data, error = executor.next_done()
            plan = by_index[index]
            if error is not None:
                if plan.action == "gpu":     # the GPU job failed: the result stands, its GPU items still pending
                    plan.result = dict(plan.result, problems=plan.result.get("problems", []) + [
                        f"its GPU items could not be graded on a GPU worker: {error}"])
                else:
                    plan.error = error
            else:
                plan.result = jobs.merge(plan.result, data) if plan.action == "gpu" else data
                store.put(plan.student, plan.assignment, plan.digest, plan.result)
                if plan.action == "grade" and executor.gpu and jobs.pending_items(plan.result):
                    plan.action = "gpu"         # its GPU items next, on a GPU worker
                    send(plan)
                    continue
            ready.add(plan.index)
            refill()            # the workers grade the next jobs while this process writes the gradebook
            write_ready()
        save_report(course)
    finally:
        out.close()
        if own:
            executor.close()
    final = [results[p.index] for p in plans]
    if progress:
        out.say(summary(final, plans, time.perf_counter() - started, executor))
    return final


def _write(course, plan, seed, sandbox, out):
    """Record ``plan`` in the gradebook (nbgrader's autograde, replaying its result), and say so."""
    if plan.action == "keep":    # deadlines or submission time may have changed since
        problem = settle_lateness(course, plan.student, plan.assignment)
        kept = result_now(course, plan.student, plan.assignment)
        kept.problems = kept.problems + [problem] * bool(problem)
        return kept
    if plan.error is not None:
        result = record_error(course, plan.student, plan.assignment, plan.problems + [plan.error], seed, sandbox)
    else:
        used = plan.result.get("seed", seed) if plan.result else seed
        result = autograde(course, plan.student, plan.assignment, seed=used, sandbox=sandbox,
                           replay=plan.result is not None)
    scored = f"{result.score:g}/{result.max_score:g} points" if result.status != "missing" else "missing"
    waiting = f", {len(result.pending)} pending a GPU" if result.pending else ""
    waiting += f", GRADER ERROR in {', '.join(result.grader_errors)}" if result.grader_errors else ""
    note = f"  ! {'; '.join(result.problems)}" if result.problems and result.status != "missing" else ""
    worked = plan.result.get("seconds", 0.0) if plan.result else result.seconds
    out.step(f"{plan.student}/{plan.assignment}: {scored}{waiting} ({worked:.1f} s){note}",
             graded=plan.action != "record")
    return result


def summary(results, plans, seconds, executor):
    """The last line of a batch: what became of every submission, and the time and memory it took."""
    counts = collections.Counter(r.status for r in results)
    pending = sum(bool(r.pending) for r in results)
    graded = [p for p in plans if p.action in ("grade", "gpu", "grade-gpu") and p.result is not None]
    work = sum(p.result.get("seconds", 0.0) for p in graded)
    rss = max((p.result.get("peak_rss_mb", 0.0) for p in graded), default=0.0)
    kept = sum(p.action == "keep" for p in plans)
    broken = [r for r in results if r.grader_errors]
    parts = [f"{counts['graded']} graded", f"{counts['error']} error{'s' * (counts['error'] != 1)}",
             f"{pending} with items pending a GPU", f"{counts['missing']} missing",
             f"{len(broken)} with grader errors"]
    line = f"Done in {_duration(seconds)} with {executor.name}: {', '.join(parts)}"
    if kept:
        line += f"; {kept} kept from an earlier run"
    if graded:
        line += (f". {len(graded)} notebooks graded: {seconds / len(graded):.1f} s each in wall time, "
                 f"{work / len(graded):.1f} s of grading each; largest process {rss:.0f} MB")
    return line + "." + changes_text(results, {p.key for p in plans if p.action != "keep"}) + grader_errors_text(broken)


def changes_text(results, regraded):
    """What this run changed of earlier automatic scores, per submission and item (old -> new)."""
    lines = [f"  {r.student}/{r.assignment}: " + ", ".join(
        f"{c['item']} {c['old']:g} -> {c['new']:g}" + (f" ({c['old_status']} -> {c['new_status']})"
                                                       if c['old_status'] != c['new_status'] else "")
        for c in r.changes if c.get("old") is not None)
        for r in results if f"{r.student}/{r.assignment}" in regraded and any(
            c.get("old") is not None for c in r.changes)]
    return ("\nChanged by this regrade (automatic scores; manual scores and extra credit are kept):\n"
            + "\n".join(lines)) if lines else ""


def grader_errors_text(broken):
    """The items the grader's own code failed on: not the students' failures; fix the grader and regrade them."""
    if not broken:
        return ""
    lines = [f"  {r.student}/{r.assignment}: {', '.join(r.grader_errors)}" for r in broken]
    return ("\nGRADER ERRORS (the grader's own code failed; 0 points until regraded after the fix; tracebacks in "
            "grading-records/):\n" + "\n".join(lines))
