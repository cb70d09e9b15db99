"""Grading a whole class: jobs out to graders (this process, or Dask workers), results back, one writer.

``grade_batch`` plans every ``(student, assignment)`` pair, sends one job per submission that needs grading to an
executor, and writes the results into nbgrader's gradebook from this process alone, in the order of the pairs, so
that a grade never depends on which worker finished first:

* **Executors** (``executors``). ``InlineExecutor`` grades here, one job after another (``--workers 0``).
  ``DaskExecutor`` sends jobs to Dask distributed: a local cluster of ``--workers N`` processes (one per core
  by default), or an existing cluster (``--scheduler tcp://HOST:8786``). Workers get the notebook's bytes and
  return plain data (``jobs.grade_job``); they need no course directory and no gradebook.
* **GPU items.** A job graded where there is no CUDA leaves the GPU items pending. Where the cluster has a worker
  started with ``--resources GPU=1``, a second job grades just those items there (Dask resource ``GPU=1``), and the
  two results are merged. Without one they stay pending; ``grade --pending`` completes them later.
* **Nothing lost, nothing graded twice.** Every finished result is kept at once, atomically, in
  ``grading-results/<student>/<assignment>.json`` with the notebook's content hash (its bytes and the grader's
  checks and settings, ``jobs.submission_digest``), before nbgrader's autograde records it (``TrustedExecute`` with
  ``replay``); the verdict record keeps the same hash. A rerun after a kill (of this process or of a worker) skips what was recorded with the same hash,
  writes what was graded but not yet recorded, and grades the rest: what is missing, failed, or changed since.
  A Dask worker that dies mid-job has the job retried once elsewhere (``allowed-failures: 1``), then it is an
  error with the reason.
* **Progress** (``progress``). A bar with counts, rate and ETA on a terminal (tqdm), a line per submission, and a
  summary that lists each automatic score the run changed (old -> new) and every grader error.
"""

import collections
import time

from autograder.course.executors import DaskExecutor, executor_for
from autograder.course.grading import (autograde, inspect_submission, load_report, record_error, result_now, result_of,
                                       settle_lateness, submission_path)
from autograder.course.progress import Progress, counted, duration
from autograder.engine import jobs
from autograder.engine.records import KeptResults
from autograder.settings import as_dict as settings_now

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
    if only_pending and plans:
        executor.wait_for_gpu()
    for plan in plans:
        plan.action = _decide(plan, force, executor.gpu)
    out = Progress(sum(p.action != "keep" for p in plans), progress)
    results = {}
    sources, checks, settings = {}, {}, settings_now()    # what every job of an assignment carries alike

    def job(plan, only=None):
        if plan.assignment not in sources:
            sources[plan.assignment] = jobs.source_map(course, plan.assignment)
            checks[plan.assignment] = jobs.checks_digest(plan.assignment)
        # Fewer jobs wait behind it than there are workers, and the workers end with the batch: the worker that takes
        # it most likely gets no other, so it starts no sandboxed worker ahead for a next notebook (1.5 to 2 s of CPU
        # each, for nothing). Where one does get another, that notebook's worker starts when it is needed.
        last = executor.ends_with_batch and len(waiting) < executor.workers
        return jobs.Job(plan.student, plan.assignment, plan.data, sources[plan.assignment], seed, sandbox, only,
                        settings, checks[plan.assignment], last)

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
            out.say(f"Grading {counted(len(plans), 'submission')} with {executor.name}{gpu} (hidden-test seed {seed}; "
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
        written = 0        # the pairs written so far, in their order: each as soon as it and those before are ready

        def write_ready():
            nonlocal written
            while written < len(plans) and plans[written].index in ready:
                results[plans[written].index] = _write(course, plans[written], seed, sandbox, out)
                written += 1

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
        if plan.result is not None:     # the grading time is the job's (recording its result took a fraction)
            result.seconds = plan.result.get("seconds", result.seconds)
    scored = f"{result.score:g}/{result.max_score:g} points" if result.status != "missing" else "missing"
    waiting = f", {len(result.pending)} pending a GPU" if result.pending else ""
    waiting += f", GRADER ERROR in {', '.join(result.grader_errors)}" if result.grader_errors else ""
    waiting += f", UNDER REVIEW: {', '.join(result.under_review)}" if result.under_review else ""
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
    line = f"Done in {duration(seconds)} with {executor.name}: {', '.join(parts)}"
    if kept:
        line += f"; {kept} kept from an earlier run"
    if graded:
        line += (f". {counted(len(graded), 'notebook')} graded: {seconds / len(graded):.1f} s each in wall time, "
                 f"{work / len(graded):.1f} s of grading each; largest process {rss:.0f} MB")
    return (line + "." + changes_text(results, {p.key for p in plans if p.action != "keep"})
            + grader_errors_text(broken) + under_review_text(results))


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


def under_review_text(results):
    """The items put under review (a construct that only serves to evade grading): 0 until the instructor decides."""
    lines = [f"  {r.student}/{r.assignment}: {', '.join(r.under_review)}" for r in results if r.under_review]
    return ("\nUNDER REVIEW (0 points until you decide; `python -m autograder review` lists each construct and its "
            "line):\n" + "\n".join(lines)) if lines else ""


def grader_errors_text(broken):
    """The items the grader's own code failed on: not the students' failures; fix the grader and regrade them."""
    if not broken:
        return ""
    lines = [f"  {r.student}/{r.assignment}: {', '.join(r.grader_errors)}" for r in broken]
    return ("\nGRADER ERRORS (the grader's own code failed; 0 points until regraded after the fix; tracebacks in "
            "grading-records/):\n" + "\n".join(lines))
