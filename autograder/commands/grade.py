"""``python -m autograder grade``: every submission of a course graded, with progress; returns a result per submission.

It takes the course's lock (one ``grade`` at a time), plans the pairs (every student under ``submitted/`` with every
assignment), checks the deadlines and the sandbox before grading anything, writes every due date and extension into
the gradebook from the settings, refuses a gradebook that is missing or does not match the records (unless
``--force`` grades everything again), registers the assignments, and hands the batch to ``batch.grade_batch``,
which grades each submission (``grading.autograde``) and writes its verdict record.
"""

import contextlib
import datetime
import json
import os
import socket
from pathlib import Path

from autograder.commands.build import generate_assignments, topics
from autograder.course.batch import grade_batch
from autograder.course.current_grades import unchecked_while_regrading
from autograder.course.gradebook_state import require_gradebook
from autograder.settings import settings
from autograder.spec import new_run_seed


def submissions(course, assignments=None, students=None):
    """``(student, assignment)`` pairs, every student under ``submitted/`` (or given) with every assignment,
    submitted or not (a missing one is recorded as missing, with 0), in a stable order."""
    root = Path(course) / "submitted"
    assignments = assignments or topics(course)
    found = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.exists() else []
    students = students or found
    return [(s, a) for s in students for a in assignments]


def register_assignments(course, assignments, released=False):
    """Put each assignment in the course's gradebook as ``source/`` defines it now (nbgrader's generate_assignment):
    autograde restores the test cells, hidden tests included, from there; with its due date and every extension on it
    from the settings (``late.write_deadlines``).
    ``released``: this process has just released them from ``source/`` (the demo): only the due dates are written."""
    from nbgrader.api import Gradebook

    from autograder.course.lateness import write_deadlines

    if not released:
        for _ in generate_assignments(course, assignments):
            pass
    with Gradebook(settings.grading.gradebook_url(course)) as gradebook:
        for assignment in assignments:      # every due date with every extension on it, from the settings
            write_deadlines(gradebook, assignment)


LOCK = ".grading.lock"     # in the course directory while a `grade` runs: {"pid", "host", "started"}


class GradeLocked(ValueError):
    """Another ``grade`` holds the course."""


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def grade_lock(course, progress=print):
    """One ``grade`` at a time per course: the lock file :data:`LOCK`, made atomically, with this process's pid,
    host and start time; GradeLocked (saying who holds it) while another ``grade`` runs. A lock whose process has
    died (on this host) is taken over, with a note."""
    path = Path(course) / LOCK
    mine = {"pid": os.getpid(), "host": socket.gethostname(),
            "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    for _ in range(2):
        try:
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            try:
                holder = json.loads(path.read_text(encoding="utf-8"))
                pid, host, started = int(holder["pid"]), str(holder["host"]), str(holder["started"])
            except (OSError, ValueError, KeyError, TypeError):
                pid, host, started = None, "", "an unknown time"
            if pid is not None and (host != mine["host"] or _alive(pid)):
                raise GradeLocked(f"another `python -m autograder grade` is grading this course (pid {pid} on {host}, "
                                  f"started {started}); wait for it to finish (if that process is gone, remove "
                                  f"{path})") from None
            if progress:
                progress(f"note: took over the grading lock of pid {pid} (started {started}), which is no longer "
                         "running")
            path.unlink(missing_ok=True)
            continue
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(mine, out)
        break
    else:
        raise GradeLocked(f"could not take the grading lock {path}: another `grade` took it at the same time")
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            if json.loads(path.read_text(encoding="utf-8")).get("pid") == mine["pid"]:
                path.unlink()


def grade_all(course, assignments=None, students=None, progress=print, seed=None, only_pending=False, sandbox=True,
              workers=0, scheduler=None, force=False, released=False):
    """Autograde every submission (``autograder.course.batch``), with progress; returns a result per submission.

    ``seed`` is the hidden variants' seed for the run (a new one by default; it is recorded). ``workers``: 0 grades
    in this process; N on a local Dask cluster of N processes (None: one per core); ``scheduler``: on the Dask
    cluster at that address. A submission recorded before with the same content hash (notebook, checks and
    settings) is kept unless ``force``. With ``only_pending``, only the submissions with items waiting for a GPU.
    ``released``: the caller has just released ``assignments`` from ``source/`` (``run_demo``), so they are not
    released again before grading (10 assignments: about 4 s); their due dates are written all the same.
    """
    with grade_lock(course, progress):
        return _grade_all(course, assignments, students, progress, seed, only_pending, sandbox, workers, scheduler,
                          force, released)


def _grade_all(course, assignments, students, progress, seed, only_pending, sandbox, workers, scheduler, force,
               released):
    from autograder.checks import TOPICS
    from autograder.course.late_policy import check_deadlines

    assignments = assignments or topics(course)
    known = list(TOPICS) + [a for a in assignments if a not in TOPICS]
    for warning in check_deadlines(known):      # a bad date stops here (DeadlineError), before grading anything
        if progress:
            progress(f"warning: {warning}")
    pairs = submissions(course, assignments, students)
    seed = new_run_seed() if seed is None else seed
    if sandbox and not scheduler:
        from autograder.sandbox.bubblewrap import probe

        probe()   # no sandbox here: stop before grading anything, with what to install or allow (SandboxUnavailable)
    rewrite_deadlines(course, topics(course))  # every assignment's, together: one out of step (an older version) is
                                               # repaired before anything reads the gradebook
    if not force:       # kept grades are read from the gradebook: it must be there and match the records
        require_gradebook(course)
    with unchecked_while_regrading(course, force):
        return grade_batch(course, pairs, seed=seed, sandbox=sandbox, progress=progress, workers=workers,
                           scheduler=scheduler, force=force, only_pending=only_pending,
                           register=lambda: register_assignments(course, sorted({a for _, a in pairs},
                                                                                key=assignments.index), released))


def rewrite_deadlines(course, assignments):
    """Every due date and extension of ``assignments`` already in the course's gradebook written again from the
    settings, before anything reads it (``late.write_deadlines``); nothing when there is no gradebook yet."""
    from nbgrader.api import Gradebook, MissingEntry

    from autograder.course.gradebook_state import gradebook_file
    from autograder.course.lateness import write_deadlines

    url = settings.grading.gradebook_url(course)
    path = gradebook_file(url)
    if path is not None and not os.path.exists(path):
        return
    with Gradebook(url) as gradebook:
        for assignment in assignments:
            try:
                write_deadlines(gradebook, assignment)
            except MissingEntry:
                continue


# ------------------------------------------------------------------ the command line

def arguments(parser):
    """The command's arguments (``autograder/cli.py`` lists the commands)."""
    parser.add_argument("assignments", nargs="*", help="only these assignments (default: all)")
    parser.add_argument("--student", action="append", help="only this student (repeatable)")
    parser.add_argument("--seed", type=int, help="the hidden variants' seed (default: a new one, recorded in the report)")
    parser.add_argument("--pending", action="store_true",
                        help="only the submissions with items waiting for a GPU (on a machine with one, or with "
                             "--scheduler and a Dask worker started with --resources GPU=1)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="grading processes of a local Dask cluster (default: one per core); 0 grades in this "
                             "process, one submission after another")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="grade on the Dask cluster at ADDRESS (tcp://HOST:8786) instead of a local one")
    parser.add_argument("--force", action="store_true",
                        help="grade every submission again, even those recorded with the same notebook, checks and "
                             "settings")
    parser.add_argument("--no-sandbox", action="store_true",
                        help="run students' code without the sandbox (only on a machine where it may do anything; "
                             "every record says so)")


def from_command_line(args, parser):
    """``python -m autograder grade``: what the command prints, and its exit status."""
    from autograder.commands.build import topics
    from autograder.commands.pending import print_gradebook
    from autograder.course.grading import load_report
    assignments = args.assignments or topics(args.course)
    results = grade_all(args.course, assignments, args.student, seed=args.seed, only_pending=args.pending,
                        sandbox=not args.no_sandbox, workers=args.workers, scheduler=args.scheduler,
                        force=args.force)
    students = sorted({r.student for r in results})
    print_gradebook(assignments, students, load_report(args.course))
    from autograder.commands.similarity import summary_text
    print(summary_text(args.course, assignments))
    return 3 if any(r.grader_errors for r in results) else 0   # the grader's own failure: see its summary
