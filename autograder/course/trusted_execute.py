"""nbgrader's Execute step, replaced by trusted grading.

No kernel runs the notebook: the student's code cells
(every code cell but the graded test cells, in order, helper cells included) run in a
sandboxed worker, and each graded item's check runs in this process, where no student code
ever ran (``trusted_runner``). The verdicts are written into the test cells as outputs, the way
a kernel would have left them: an error output with the check's message for an item that
failed (nbgrader scores the cell 0, and ``generate_feedback`` shows the message), a line on
stdout for one that passed. The test cells' own text and tags are never run, so nothing a
student writes in their metadata changes a grade.

Plain ``nbgrader autograde`` and the formgrader's button take this path too (``nbgrader_config.py``).
"""

import os

from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute, NbGraderPreprocessor, SaveAutoGrades
from traitlets import Unicode

from ..spec import SEED_ENV, new_run_seed
from . import notebooks
from .jobs import cells_digest, grade_from_data, official_grade, restore_metadata, source_map
from .trusted_runner import TRUSTED_PROBLEM, grade_cells, launcher_from_settings, notebook_cells


_REPLAY = {}   # (assignment, student) -> a result graded elsewhere (jobs.grade_job), written by the grader's writer


def replaying(assignment, student, data):
    """Have the next autograde of ``student``'s ``assignment`` in this process write ``data`` (a result of
    ``jobs.grade_job``) instead of grading the notebook again; ``None`` forgets it."""
    if data is None:
        _REPLAY.pop((assignment, student), None)
    else:
        _REPLAY[(assignment, student)] = data


class TrustedExecute(Execute):
    def preprocess(self, nb, resources=None, km=None):
        info = (resources or {}).get("nbgrader") or {}
        topic = info.get("assignment")
        cells = notebook_cells(nb, topic)
        done = _REPLAY.pop((topic, info.get("student")), None)
        if done is not None and done.get("cells_digest") == cells_digest(cells):
            grade = grade_from_data(done)
        else:
            if done is not None:
                self.log.warning("%s the notebook nbgrader read is not the one graded by the worker (changed "
                                 "since?): graded again here", TRUSTED_PROBLEM)
            grade = self.grade_here(topic, cells)
        for problem in grade.problems:
            self.log.warning("%s %s", TRUSTED_PROBLEM, problem)
        write_verdicts(nb, topic, grade)
        return nb, resources

    def grade_here(self, topic, cells):
        seed = os.environ.get(SEED_ENV)
        if not seed:
            seed = str(new_run_seed())
            self.log.info("Hidden tests graded with seed %s (AUTOGRADER_GRADING_SEED reproduces it)", seed)
        with official_grade():
            return grade_cells(topic, cells, seed=int(seed), launcher=launcher_from_settings(), ahead=True)


def write_verdicts(nb, topic, grade):
    """Each code cell's outputs from the trusted run: what the student's cells printed and raised, and each
    test cell's verdict."""
    outcomes = {o.cell: o for o in grade.cells}
    results = {f"test_{r.item}": r for r in grade.items}
    for index, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "code":
            continue
        key = notebooks.grade_id(cell) or f"cell {index}"
        cell["outputs"] = []
        if key in results:
            result = results[key]
            if result.passed:
                cell["outputs"].append(new_output("stream", name="stdout", text=f"{result.check}: passed\n"))
            else:
                name = "PendingGPU" if result.status == "pending" else "CheckFailure"
                cell["outputs"].append(new_output("error", ename=name, evalue=result.message,
                                                  traceback=[f"{name}: {result.message}"]))
        elif key in outcomes:
            outcome = outcomes[key]
            if outcome.output:
                cell["outputs"].append(new_output("stream", name="stdout", text=outcome.output))
            if outcome.error:
                ename, _, evalue = outcome.error.partition(": ")
                cell["outputs"].append(new_output("error", ename=ename or "Error", evalue=evalue,
                                                  traceback=[outcome.error]))


class ReplaceGrades(SaveAutoGrades):
    """nbgrader's SaveAutoGrades, where a regrade replaces every earlier score of the submission: the automatic
    score, and any manual score and extra credit (nbgrader keeps those across autogrades; a grade must be what
    this run's verdicts say, whoever wrote the earlier numbers)."""

    def _add_score(self, cell, resources):
        grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id,
                                          self.assignment_id, self.student_id)
        grade.manual_score = None
        grade.extra_credit = None
        self.gradebook.db.commit()
        super()._add_score(cell, resources)


class TrustedMetadata(NbGraderPreprocessor):
    """Before nbgrader reads anything of a submission: every cell's nbgrader metadata is the instructor's, from the
    source notebook, found by the cell's grade id. A cell whose id the source does not have (a student's own cell,
    or a pasted copy given a new id or points) loses its nbgrader metadata and is plain code; a second cell with
    an id already seen loses it too. Nothing a student writes in metadata is read by nbgrader or the grader."""

    course_root = Unicode("", help="the course directory (source/<assignment>/<notebook>.ipynb is read from it)").tag(
        config=True)

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader") or {}
        course = self.course_root or "."
        for cell_id in restore_metadata(nb, source_map(course, str(info.get("assignment")), info.get("notebook"))):
            self.log.warning("%s a cell's nbgrader metadata (grade id %r) is not the instructor's: ignored",
                             TRUSTED_PROBLEM, cell_id)
        return nb, resources
