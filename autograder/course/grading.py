"""Batch grading with nbgrader: validate, autograde with limits, read the gradebook, keep every record.

Each submission (one student's notebook for one assignment) is checked before
nbgrader sees it (size, readable JSON, graded cells present) and then autograded
by nbgrader's own autograde, called in this process: its Execute step is
``TrustedExecute``, which runs the student's code in a sandboxed worker with
limits and deadlines and every check here, so a hanging or memory-hungry
submission costs its own points and nothing else. Every record (scores per
graded item, pending GPU items, the check messages, the problems found, the
hidden-test seed, whether it was sandboxed) is written to ``grading-report.json``
in the course directory, atomically, by this process alone.
"""

import json
import os
import re
import tempfile
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..checks import items_of
from ..settings import settings
from ..spec import SEED_ENV, new_run_seed
from . import notebooks
from .build import generate_assignments, topics
from .trusted_execute import replaying
from .trusted_runner import NO_SANDBOX_ENV, TRUSTED_PROBLEM


def points(grades):
    """``(score, max_score)`` summed over ``{item: [score, max_score]}``."""
    return sum(s for s, _ in grades.values()), sum(m for _, m in grades.values())


def zero_grades(assignment):
    """``{item: [0, points]}`` for every graded item of ``assignment``: what a missing or failed submission gets."""
    return {item.id: [0.0, item.points] for item in items_of(assignment)}


@dataclass
class SubmissionResult:
    student: str
    assignment: str
    status: str = "graded"      # "graded", "error" (nbgrader could not grade it) or "missing"
    problems: list = field(default_factory=list)   # what was wrong with the submission, for people
    grades: dict = field(default_factory=dict)     # {item id: [score, max_score]}
    pending: list = field(default_factory=list)    # item ids waiting for a machine with a GPU (0 points until then)
    messages: dict = field(default_factory=dict)   # {item id: the check's message} for each item that did not pass
    seed: int | None = None     # the hidden variants' seed of the grading run (AUTOGRADER_GRADING_SEED reproduces it)
    sandboxed: bool = True      # False when graded with --no-sandbox (students' code ran unconfined)
    seconds: float = 0.0
    digest: str = ""            # the content hash it was graded for (the notebook, the checks, the settings)
    worker: str = ""            # where its code ran and its items were graded (a Dask worker's address, or a host)
    gpu_worker: str = ""        # where its GPU items were graded, when elsewhere
    peak_rss_mb: float = 0.0    # the largest grading process (the grader's or a sandboxed worker's), MB
    # lateness, as nbgrader's gradebook has it (autograder/course/late.py, settings.deadlines):
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


def inspect_submission(course, student, assignment):
    """Problems nbgrader would hide or choke on: missing file, invalid JSON, deleted graded cells."""
    path = submission_path(course, student, assignment)
    if not path.exists():
        return "missing", [f"no notebook submitted ({path.name})"]
    size_mb = path.stat().st_size / 2**20
    if size_mb > settings.grading.max_notebook_mb:
        return "error", [f"{path.name} is {size_mb:.0f} MB, over the limit of {settings.grading.max_notebook_mb:g} MB "
                         "(settings.grading.max_notebook_mb); it was not read or graded"]
    try:
        nb = notebooks.read(path)
    except notebooks.NotebookError as error:
        return "error", [f"{path.name} cannot be read: {error}"]
    present = set(notebooks.graded_test_ids(nb))
    deleted = [item.cell_id for item in items_of(assignment) if item.cell_id not in present]
    if deleted:
        return "graded", [f"{path.name}: graded cells deleted (they score 0): {', '.join(deleted)}"]
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
    """Every score of the submission in nbgrader's gradebook set to 0 (manual scores and extra credit cleared), so
    that no earlier score outlives a submission that could not be graded."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(settings.grading.gradebook_url(course)) as gradebook:
        try:
            submission = gradebook.find_submission(assignment, student)
        except MissingEntry:
            return
        for nb in submission.notebooks:
            nb.late_submission_penalty = None
            for grade in nb.grades:
                grade.auto_score, grade.manual_score, grade.extra_credit = 0.0, None, None
        gradebook.db.commit()


def check_outputs(course, student, assignment):
    """``({item id: message}, [pending item ids])`` from the error outputs of the autograded notebook."""
    path = Path(course) / "autograded" / student / assignment / f"{assignment}.ipynb"
    try:
        nb = notebooks.read(path)
    except notebooks.NotebookError:
        return {}, []
    messages, pending = {}, []
    for cell in nb["cells"]:
        if not notebooks.is_graded_test(cell):
            continue
        item_id = notebooks.grade_id(cell).removeprefix("test_")
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                messages[item_id] = f"{output.get('ename')}: {output.get('evalue')}"
                if output.get("ename") == "PendingGPU":
                    pending.append(item_id)
    return messages, pending


def autograde(course, student, assignment, seed=None, sandbox=True, done=None):
    """Autograde one submission; never raises for a bad submission. ``done``: its result graded elsewhere
    (``jobs.grade_job``), which nbgrader's autograde writes instead of grading the notebook here."""
    started = time.perf_counter()
    status, problems = inspect_submission(course, student, assignment)
    result = SubmissionResult(student, assignment, status, list(problems), seed=seed, sandboxed=sandbox)
    if status == "missing":
        result.grades = zero_grades(assignment)
        return result
    failed = False
    if not (status == "error" and _refused(problems)):      # over the size limit: nbgrader never reads it
        replaying(assignment, student, done)
        try:
            failed = _autograde_here(course, student, assignment, seed, sandbox, result)
        finally:
            replaying(assignment, student, None)
    if failed:
        result.status = "error"
    if failed or status == "error":
        # never a stale score from an earlier run: an ungraded submission scores 0, and the problem says why
        result.grades = zero_grades(assignment)
        zero_gradebook(course, student, assignment)
    else:
        result.grades = read_grades(course, student, assignment) or zero_grades(assignment)
        result.messages, result.pending = check_outputs(course, student, assignment)
        settle_lateness(course, result)
    result.seconds = time.perf_counter() - started
    return result


def settle_lateness(course, result):
    """``result`` with its lateness from nbgrader's gradebook, brought up to date with the deadlines in force and
    its ``timestamp.txt`` first (``late.settle``); a graded result kept from an earlier run gets it too."""
    from .late import DeadlineError, settle

    if result.status != "graded":
        return result
    try:
        found = settle(settings.grading.gradebook_url(course), course, result.student, result.assignment)
    except DeadlineError as error:
        result.problems = [*result.problems, f"lateness not applied: {error}"]
        return result
    for name, value in found.items():
        setattr(result, name, value)
    return result


def record_error(course, student, assignment, problems, seed, sandbox):
    """A submission that could not be graded (its grader failed or died): 0 for every item, in the gradebook too,
    and the reason."""
    zero_gradebook(course, student, assignment)
    return SubmissionResult(student, assignment, "error", list(problems), zero_grades(assignment), seed=seed,
                            sandboxed=sandbox)


def _refused(problems):
    return any("was not read or graded" in p for p in problems)


_APIS = {}


def nbgrader_api(course):
    """nbgrader's API for ``course``, configured by its ``nbgrader_config.py``; one per course and process."""
    from nbgrader.apps.api import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    root = str(Path(course).resolve())
    if root not in _APIS:
        config = PyFileConfigLoader("nbgrader_config.py", path=root).load_config()
        config.CourseDirectory.root = root
        _APIS[root] = NbGraderAPI(config=config)
    return _APIS[root]


def _autograde_here(course, student, assignment, seed, sandbox, result):
    """nbgrader's autograde in this process: no student code runs here (TrustedExecute sends it to a sandboxed
    worker, whose deadlines and limits bound its time and memory), so nbgrader and torch load once per batch."""
    saved = {key: os.environ.get(key) for key in (SEED_ENV, NO_SANDBOX_ENV)}
    os.environ[SEED_ENV] = str(seed if seed is not None else new_run_seed())
    if sandbox:
        os.environ.pop(NO_SANDBOX_ENV, None)
    else:
        os.environ[NO_SANDBOX_ENV] = "1"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # nbgrader's SQLAlchemy warnings are not the student's problem
            outcome = nbgrader_api(course).autograde(assignment, student, force=True, create=True)
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    log = outcome.get("log") or ""
    result.problems += _problems_in_log(log)
    if not outcome.get("success") and result.status != "error":
        result.problems.append("nbgrader autograde failed: " + nbgrader_cause(log + (outcome.get("error") or "")))
        return True
    return False


def _problems_in_log(log):
    """What nbgrader's log says went wrong with a submission that it still graded."""
    found = []
    if "Exception while loading config file" in log:
        found.append("nbgrader_config.py failed to load (grading ran with nbgrader's defaults): fix the course config")
    for cell in re.findall(r"Kernel died in cell (\d+)", log):
        found.append(f"the kernel died in cell {cell} (crash or out of memory); a fresh kernel ran the cells after it")
    found += [line.split(TRUSTED_PROBLEM, 1)[1].strip() for line in log.splitlines() if TRUSTED_PROBLEM in line]
    if "CellTimeoutError" in log or "Timeout waiting for execute reply" in log or "Cell execution timed out" in log:
        found.append(f"a cell ran longer than {settings.grading.cell_timeout_s} s and was stopped")
    return found


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


def submissions(course, assignments=None, students=None):
    """``(student, assignment)`` pairs, every student under ``submitted/`` (or given) with every assignment,
    submitted or not (a missing one is recorded as missing, with 0), in a stable order."""
    root = Path(course) / "submitted"
    assignments = assignments or topics(course)
    found = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.exists() else []
    students = students or found
    return [(s, a) for s in students for a in assignments]


def register_assignments(course, assignments):
    """Put each assignment in the course's gradebook as ``source/`` defines it now (nbgrader's generate_assignment):
    autograde restores the test cells, hidden tests included, from there; with its due date from the settings."""
    from nbgrader.api import Gradebook

    from .late import write_due_date

    for _ in generate_assignments(course, assignments):
        pass
    with Gradebook(settings.grading.gradebook_url(course)) as gradebook:
        for assignment in assignments:
            write_due_date(gradebook, assignment)


def grade_all(course, assignments=None, students=None, progress=print, seed=None, only_pending=False, sandbox=True,
              workers=0, scheduler=None, force=False):
    """Autograde every submission (``autograder.course.batch``), with progress; returns a result per submission.

    ``seed`` is the hidden variants' seed for the run (a new one by default; it is recorded). ``workers``: 0 grades
    in this process; N on a local Dask cluster of N processes (None: one per core); ``scheduler``: on the Dask
    cluster at that address. A submission recorded before with the same content hash (notebook, checks and
    settings) is kept unless ``force``. With ``only_pending``, only the submissions with items waiting for a GPU.
    """
    from ..checks import TOPICS
    from .batch import grade_batch
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
                                                                            key=assignments.index)))


REPORT = "grading-report.json"


def save_report(course, results):
    """Merge ``results`` into the course's grading report (one record per student and assignment), atomically:
    the file is always either the old report or the new one."""
    path = Path(course) / REPORT
    records = load_report(course)
    for result in results:
        records[f"{result.student}/{result.assignment}"] = asdict(result)
    handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=".grading-report-", suffix=".json")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        json.dump(records, out, indent=1, sort_keys=True)
    os.replace(tmp, path)


def load_report(course):
    path = Path(course) / REPORT
    if not path.exists():
        return {}
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise RuntimeError(f"{path} is not valid JSON ({error}); regrade to rewrite it") from None
    return records if isinstance(records, dict) else {}
