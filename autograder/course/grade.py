"""``python -m autograder grade``: every submission of a course graded, with progress; returns a result per submission.

It plans the pairs (every student under ``submitted/`` with every assignment), checks the deadlines and the sandbox
before grading anything, registers the assignments in the gradebook, and hands the batch to ``batch.grade_batch``,
which grades each submission (``grading.autograde``) and writes its verdict record.
"""

from pathlib import Path

from ..settings import settings
from ..spec import new_run_seed
from .batch import grade_batch
from .build import generate_assignments, topics


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
    autograde restores the test cells, hidden tests included, from there; with its due date from the settings.
    ``released``: this process has just released them from ``source/`` (the demo): only the due dates are written."""
    from nbgrader.api import Gradebook

    from .late import write_due_date

    if not released:
        for _ in generate_assignments(course, assignments):
            pass
    with Gradebook(settings.grading.gradebook_url(course)) as gradebook:
        for assignment in assignments:
            write_due_date(gradebook, assignment)


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
    from ..checks import TOPICS
    from .late import check_deadlines

    assignments = assignments or topics(course)
    known = list(TOPICS) + [a for a in assignments if a not in TOPICS]
    for warning in check_deadlines(known):      # a bad date stops here (DeadlineError), before grading anything
        if progress:
            progress(f"warning: {warning}")
    pairs = submissions(course, assignments, students)
    seed = new_run_seed() if seed is None else seed
    if sandbox and not scheduler:
        from ..trusted.sandbox import probe

        probe()   # no sandbox here: stop before grading anything, with what to install or allow (SandboxUnavailable)
    return grade_batch(course, pairs, seed=seed, sandbox=sandbox, progress=progress, workers=workers,
                       scheduler=scheduler, force=force, only_pending=only_pending,
                       register=lambda: register_assignments(course, sorted({a for _, a in pairs},
                                                                            key=assignments.index), released))
