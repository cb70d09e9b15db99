"""Grading submissions with nbgrader: validate, autograde with limits, keep every record.

Each submission (one student's notebook for one assignment) is checked before
nbgrader sees it (size, readable JSON) and then autograded by nbgrader's own
autograde, called in this process: its Execute step is ``TrustedExecute``, which
runs the student's code in a sandboxed worker with limits and deadlines and every
check here, so a hanging or memory-hungry submission costs its own points and
nothing else; its ``RecordedGrades`` step writes the gradebook from the run's
verdict record and appends the record to ``grading-records/`` (``records``). A
submission that could not be graded (or was not submitted) gets a record saying
so, written here. ``load_report`` reads the grades in force (``current_grades``), live.
"""

import re
import time
import warnings
from dataclasses import dataclass, field, fields
from pathlib import Path

from autograder.checks import items_of
from autograder.course.current_grades import current, zero_grades
from autograder.course.unreadable_feedback import write_notice
from autograder.engine import notebooks
from autograder.engine.jobs import deleted_cells_problem
from autograder.engine.records import RecordStore, new_record, who
from autograder.settings import settings
from autograder.spec import new_run_seed


def points(grades):
    """``(score, max_score)`` summed over ``{item: [score, max_score]}``."""
    return sum(s for s, _ in grades.values()), sum(m for _, m in grades.values())


@dataclass
class SubmissionResult:
    student: str
    assignment: str
    status: str = "graded"      # "graded", "error" (nbgrader could not grade it) or "missing"
    problems: list = field(default_factory=list)   # what was wrong with the submission, for people
    grades: dict = field(default_factory=dict)     # {item id: [score, max_score]}: the gradebook's current scores
    pending: list = field(default_factory=list)    # item ids waiting for a machine with a GPU (0 points until then)
    messages: dict = field(default_factory=dict)   # {item id: the check's message} for each item that did not pass
    grader_errors: list = field(default_factory=list)   # item ids the grader's own code failed on (0 until regraded)
    under_review: list = field(default_factory=list)    # item ids an instructor decides
    changes: list = field(default_factory=list)    # [{"item", "old", "new", ...}]: automatic scores this run changed
    notes: dict = field(default_factory=dict)      # {item id: how it was graded} (a deleted test cell: from the spec)
    manual: dict = field(default_factory=dict)     # {item id: the instructor's manual score}, kept across regrades
    extra_credit: dict = field(default_factory=dict)   # {item id: the instructor's extra credit}, kept too
    graded_by: str = ""         # how and by whom the record in force was graded
    graded_at: str = ""         # when (ISO 8601, UTC)
    seed: int | None = None     # the hidden variants' seed of the grading run (`grade --seed N` reproduces it)
    sandboxed: bool = True      # False when graded with --no-sandbox (students' code ran unconfined)
    seconds: float = 0.0
    digest: str = ""            # the content hash it was graded for (the notebook, the checks, the settings)
    worker: str = ""            # where its code ran and its items were graded (a Dask worker's address, or a host)
    gpu_worker: str = ""        # where its GPU items were graded, when elsewhere
    peak_rss_mb: float = 0.0    # the largest grading process (the grader's or a sandboxed worker's), MB
    # lateness, as nbgrader's gradebook has it (autograder/nbgrader_plugins/late.py, settings.deadlines):
    submitted_at: str = ""      # the submission time (its timestamp.txt), ISO 8601 in UTC; "" when it has none
    due: str = ""               # its due date with the student's extension, ISO 8601 in UTC; "" for none
    seconds_late: float = 0.0   # past that due date; 0 when on time
    late_percent: float = 0.0   # of the points earned, taken for lateness
    late_penalty: float = 0.0   # points taken for lateness (nbgrader's late_submission_penalty)
    late_note: str = ""         # for people: "late by 3 h 12 min: -10% (2.1 points)"; "" without a due date

    @property
    def score(self):
        return points(self.grades)[0]

    @property
    def max_score(self):
        return points(self.grades)[1]

    @property
    def score_after_penalty(self):
        return score_after_penalty(self.__dict__)


def score_after_penalty(record):
    """The points a record (a result, or its dict in the report) counts: those earned less the late penalty."""
    return round(points(record.get("grades") or {})[0] - (record.get("late_penalty") or 0.0), 6)


def submission_path(course, student, assignment):
    return Path(course) / "submitted" / student / assignment / f"{assignment}.ipynb"


TOO_BIG = "too big"    # inspect_submission: over the size limit, so never read (nbgrader neither)


def inspect_submission(course, student, assignment):
    """``(status, problems)``: what nbgrader would hide or choke on. The status is "graded" (deleted graded cells
    are a problem, graded all the same), "missing", "error" (invalid JSON) or :data:`TOO_BIG`."""
    path = submission_path(course, student, assignment)
    if not path.exists():
        return "missing", [f"no notebook submitted ({path.name})"]
    size_mb = path.stat().st_size / 2**20
    if size_mb > settings.grading.max_notebook_mb:
        return TOO_BIG, [f"{path.name} is {size_mb:.0f} MB, over the limit of {settings.grading.max_notebook_mb:g} MB "
                         "(settings.grading.max_notebook_mb); it was not read or graded"]
    try:
        nb = notebooks.read(path)
    except notebooks.NotebookError as error:
        return "error", [f"{path.name} cannot be read: {error}"]
    present = set(notebooks.graded_test_ids(nb))
    deleted = [item.cell_id for item in items_of(assignment) if item.cell_id not in present]
    if deleted:
        return "graded", [deleted_cells_problem(path.name, deleted)]
    return "graded", []


def read_grades(course, student, assignment):
    """``{item id: [score, max_score]}`` from nbgrader's gradebook (empty if it has no submission)."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(settings.grading.gradebook_url(course)) as gradebook:
        try:
            submission = gradebook.find_submission(assignment, student)
        except MissingEntry:
            return {}
        return {grade.name.removeprefix("test_"): [float(grade.score), float(grade.max_score)]
                for nb in submission.notebooks for grade in nb.grades if grade.cell_type == "code"}


def zero_gradebook(course, student, assignment):
    """Every automatic score of the submission in nbgrader's gradebook set to 0, so that no earlier automatic score
    outlives a submission that could not be graded; an instructor's manual scores and extra credit are kept."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(settings.grading.gradebook_url(course)) as gradebook:
        try:
            submission = gradebook.find_submission(assignment, student)
        except MissingEntry:
            return
        for nb in submission.notebooks:
            nb.late_submission_penalty = None
            for grade in nb.grades:
                grade.auto_score = 0.0
        gradebook.db.commit()


def result_of(entry):
    """A :class:`SubmissionResult` from an entry of the grades in force (``current_grades``)."""
    names = {f.name for f in fields(SubmissionResult)}
    return SubmissionResult(**{k: v for k, v in entry.items() if k in names})


def result_now(course, student, assignment):
    """The submission's result as the record store and the gradebook have it now (None: no record)."""
    from nbgrader.api import Gradebook

    from autograder.course.current_grades import entry_of, gradebook_scores, settled_or

    record = RecordStore(course).latest(student, assignment)
    if record is None:
        return None
    with Gradebook(settings.grading.gradebook_url(course)) as gradebook:
        scores, late = gradebook_scores(gradebook, student, assignment)
    return result_of(entry_of(record, scores, settled_or(late, RecordStore(course).lateness(student, assignment))))


def autograde(course, student, assignment, seed=None, sandbox=True, replay=False, graded_by="python -m autograder "
              "grade"):
    """Autograde one submission with nbgrader (its record appended to the store); never raises for a bad
    submission. ``replay``: record the worker's result kept in ``grading-results/`` (the batch graded it)."""
    started = time.perf_counter()
    status, problems = inspect_submission(course, student, assignment)
    if status == "missing":
        return record_missing(course, student, assignment, seed, sandbox)
    if status == TOO_BIG:      # over the size limit: nbgrader never reads it
        write_notice(course, student, assignment, submission_path(course, student, assignment).name, problems)
        return record_error(course, student, assignment, problems, seed, sandbox)
    store = RecordStore(course)
    before = len(store.history(student, assignment))
    failure = _autograde_here(course, student, assignment, seed, sandbox, replay, graded_by)
    if failure is None and len(store.history(student, assignment)) == before:
        failure = ("nbgrader's autograde left no verdict record: its trusted steps did not run (does the course's "
                   "nbgrader_config.py load?)")
    if status == "error":       # unreadable: nbgrader's failure on it adds nothing to the reason already found
        write_notice(course, student, assignment, submission_path(course, student, assignment).name, problems)
        return record_error(course, student, assignment, problems, seed, sandbox)
    if failure is not None:
        return record_error(course, student, assignment, problems + [failure], seed, sandbox)
    settle_lateness(course, student, assignment)
    result = result_now(course, student, assignment)
    result.problems = list(dict.fromkeys(problems + result.problems))
    result.seconds = time.perf_counter() - started
    return result


def settle_lateness(course, student, assignment):
    """The submission's lateness in nbgrader's gradebook brought up to date with the deadlines in force and its
    ``timestamp.txt`` (``lateness.settle``); a problem when they cannot be read, else None."""
    from autograder.course.late_policy import DeadlineError
    from autograder.course.lateness import settle

    try:
        found = settle(settings.grading.gradebook_url(course), course, student, assignment)
    except DeadlineError as error:
        return f"lateness not applied: {error}"
    RecordStore(course).set_lateness(student, assignment, found)
    return None


def record_error(course, student, assignment, problems, seed, sandbox, graded_by="python -m autograder grade"):
    """A submission that could not be graded (its grader failed or died): a record that says why, 0 for every item's
    automatic score (in the gradebook too; an instructor's manual scores stay)."""
    zero_gradebook(course, student, assignment)
    RecordStore(course).append(new_record(student, assignment, status="error", seed=seed, sandboxed=sandbox,
                                          graded_by=who(graded_by), problems=problems))
    return result_now(course, student, assignment)


def record_missing(course, student, assignment, seed, sandbox, graded_by="python -m autograder grade"):
    """Nothing submitted: a record that says so (0 of the assignment's points)."""
    RecordStore(course).append(new_record(student, assignment, status="missing", seed=seed, sandboxed=sandbox,
                                          graded_by=who(graded_by)))
    return result_now(course, student, assignment)


_APIS = {}


def nbgrader_api(course, seed=-1, sandbox=True, replay=False, graded_by="python -m autograder grade"):
    """nbgrader's API for ``course``, configured by its ``nbgrader_config.py`` and, for this run, the trusted
    grader's own options (``TrustedExecute``'s seed, sandbox, replay and ``graded_by``): no environment variable
    or module-level value carries them. One per course and options, in this process."""
    from nbgrader.apps.api import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    root = str(Path(course).resolve())
    key = (root, int(seed), bool(sandbox), bool(replay), graded_by)
    if key not in _APIS:
        config = PyFileConfigLoader("nbgrader_config.py", path=root).load_config()
        config.CourseDirectory.root = root
        config.TrustedExecute.seed = int(seed)
        config.TrustedExecute.sandbox = bool(sandbox)
        config.TrustedExecute.replay = bool(replay)
        config.TrustedExecute.graded_by = graded_by
        _APIS[key] = NbGraderAPI(config=config)
    return _APIS[key]


def _autograde_here(course, student, assignment, seed, sandbox, replay, graded_by):
    """nbgrader's autograde in this process (no student code runs here: TrustedExecute sends it to a sandboxed
    worker), so nbgrader and torch load once per batch; why it failed, or None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # nbgrader's SQLAlchemy warnings are not the student's problem
        outcome = nbgrader_api(course, seed if seed is not None else new_run_seed(), sandbox, replay,
                               graded_by).autograde(assignment, student, force=True, create=True)
    if not outcome.get("success"):
        return "nbgrader autograde failed: " + nbgrader_cause((outcome.get("log") or "") + (outcome.get("error") or ""))
    return None


_GENERIC = ("Please see the", "There was an error processing files", "nbgrader autograde failed")


def nbgrader_cause(text):
    """nbgrader's own reason for a failure: its first specific ERROR line, else the last line of the traceback."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [re.sub(r"^\[\w+ \| ERROR\]\s*", "", line) for line in lines if "| ERROR]" in line]
    specific = [line for line in errors if not line.startswith(_GENERIC)]
    if specific:
        return specific[0][:300]
    raised = [line for line in lines if re.match(r"^[\w.]*(Error|Exception)\b", line)]
    return (raised or errors or lines or ["(no output)"])[-1][:300]


def load_report(course):
    """The grades in force, ``{"student/assignment": entry}`` (``current_grades``): the record store's records in force
    with the gradebook's current scores."""
    return current(course)
