"""Batch grading with nbgrader: validate, autograde with limits, read the gradebook, keep every record.

Each submission (one student's notebook for one assignment) is checked before
nbgrader sees it (readable JSON, graded cells present) and then autograded by
the real ``nbgrader autograde`` in its own process with a wall-clock timeout and
an address-space limit, so that a hanging or memory-hungry submission costs its
own points and nothing else. Problems are recorded next to the scores in
``grading-report.json`` in the course directory.
"""

import json
import re
import resource
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..settings import settings
from . import notebooks
from .build import nbgrader, topics


def points(grades):
    """``(score, max_score)`` summed over ``{grade_id: [score, max_score]}``."""
    return sum(s for s, _ in grades.values()), sum(m for _, m in grades.values())


@dataclass
class SubmissionResult:
    student: str
    assignment: str
    status: str = "graded"      # "graded", "error" (nbgrader could not grade it) or "missing"
    problems: list = field(default_factory=list)   # what was wrong with the submission, for people
    grades: dict = field(default_factory=dict)     # {test cell grade_id: [score, max_score]}
    seconds: float = 0.0

    @property
    def score(self):
        return points(self.grades)[0]

    @property
    def max_score(self):
        return points(self.grades)[1]


def expected_test_ids(course, assignment):
    nb = notebooks.read(Path(course) / "source" / assignment / f"{assignment}.ipynb")
    return notebooks.graded_test_ids(nb)


def inspect_submission(course, student, assignment):
    """Problems nbgrader would hide or choke on: missing file, invalid JSON, deleted graded cells."""
    path = Path(course) / "submitted" / student / assignment / f"{assignment}.ipynb"
    if not path.exists():
        return "missing", [f"no notebook submitted ({path.name})"]
    try:
        nb = notebooks.read(path)
    except notebooks.NotebookError as error:
        return "error", [f"{path.name} cannot be read: {error}"]
    present = set(notebooks.graded_test_ids(nb))
    deleted = [i for i in expected_test_ids(course, assignment) if i not in present]
    if deleted:
        return "graded", [f"{path.name}: graded cells deleted (they score 0): {', '.join(deleted)}"]
    return "graded", []


def _limit_memory():
    limit = settings.grading.memory_limit_gb
    if limit:
        size = int(limit * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (size, size))


def read_grades(course, student, assignment):
    """``{grade_id: [score, max_score]}`` from nbgrader's gradebook (empty if it has no submission)."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{Path(course).resolve() / 'gradebook.db'}") as gradebook:
        try:
            submission = gradebook.find_submission(assignment, student)
        except MissingEntry:
            return {}
        return {grade.name: [float(grade.score), float(grade.max_score)]
                for nb in submission.notebooks for grade in nb.grades if grade.cell_type == "code"}


def autograde(course, student, assignment):
    """Autograde one submission; never raises for a bad submission."""
    started = time.perf_counter()
    status, problems = inspect_submission(course, student, assignment)
    result = SubmissionResult(student, assignment, status, list(problems))
    if status == "missing":
        return result
    timeout = settings.grading.submission_timeout_s
    try:
        proc = nbgrader(course, "autograde", assignment, "--student", student, "--force",
                        f"--Execute.timeout={int(settings.grading.cell_timeout_s)}",
                        check=False, timeout=timeout, preexec_fn=_limit_memory)
        result.problems += _problems_in_log(proc.stderr)
        if proc.returncode != 0 and status != "error":
            result.status = "error"
            result.problems.append("nbgrader autograde failed: " + _last_error(proc.stdout + proc.stderr))
    except subprocess.TimeoutExpired:
        result.status = "error"
        result.problems.append(f"grading took longer than {timeout:g} s and was stopped")
    result.grades = read_grades(course, student, assignment)
    if status == "error":
        # nbgrader records zeros for an unreadable notebook; the problem above says why.
        result.grades = result.grades or {i: [0.0, 0.0] for i in expected_test_ids(course, assignment)}
    result.seconds = time.perf_counter() - started
    return result


def _problems_in_log(log):
    """What nbgrader's log says went wrong with a submission that it still graded."""
    found = []
    if "Exception while loading config file" in log:
        found.append("nbgrader_config.py failed to load (grading ran with nbgrader's defaults): fix the course config")
    for cell in re.findall(r"Kernel died in cell (\d+)", log):
        found.append(f"the kernel died in cell {cell} (crash or out of memory); a fresh kernel ran the cells after it")
    if "CellTimeoutError" in log or "Timeout waiting for execute reply" in log or "Cell execution timed out" in log:
        found.append(f"a cell ran longer than {settings.grading.cell_timeout_s} s and was stopped")
    return found


def _last_error(text):
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if "Error" in line or "error" in line]
    return (errors or lines or ["(no output)"])[-1][:300]


def submissions(course, assignments=None, students=None):
    """``(student, assignment)`` pairs under ``submitted/``, filtered, in a stable order."""
    root = Path(course) / "submitted"
    assignments = assignments or topics(course)
    found = sorted(p.name for p in root.iterdir() if p.is_dir()) if root.exists() else []
    students = students or found
    return [(s, a) for s in students for a in assignments if (root / s / a).exists()]


def grade_all(course, assignments=None, students=None, progress=print):
    """Autograde every submission, one at a time, with a progress line each; save the report."""
    pairs = submissions(course, assignments, students)
    results = []
    started = time.perf_counter()
    for n, (student, assignment) in enumerate(pairs, 1):
        result = autograde(course, student, assignment)
        results.append(result)
        save_report(course, results)
        if progress:
            scored = f"{result.score:g}/{result.max_score:g} points" if result.grades else result.status
            note = f"  ! {'; '.join(result.problems)}" if result.problems else ""
            progress(f"[{n}/{len(pairs)}] {student}/{assignment}: {scored} ({result.seconds:.1f} s, "
                     f"{time.perf_counter() - started:.0f} s elapsed){note}", flush=True)
    return results


REPORT = "grading-report.json"


def save_report(course, results):
    """Merge ``results`` into the course's grading report (one record per student and assignment)."""
    path = Path(course) / REPORT
    records = load_report(course)
    for result in results:
        records[f"{result.student}/{result.assignment}"] = asdict(result)
    path.write_text(json.dumps(records, indent=1, sort_keys=True), encoding="utf-8")


def load_report(course):
    path = Path(course) / REPORT
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
