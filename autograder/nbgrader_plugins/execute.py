"""nbgrader's autograde steps, made trusted: the grade is computed outside the student's code and recorded once.

No kernel runs the notebook. ``TrustedExecute`` (nbgrader's Execute step) runs the student's code cells (every code
cell but the graded test cells, in order: ``notebooks.code_cells``) in a sandboxed worker and each graded item's
check in this process, where no student code ever ran (``engine.trusted_runner``), or takes the result a batch worker
graded (``TrustedExecute.replay``: ``grading-results/``, only when nbgrader reads the very cells that were graded).
It leaves the run's verdict record (``engine.records``) in nbgrader's resources, and writes into each test cell what
the student's feedback shows: the check's message for an item that failed or is pending, a neutral line for a
grader error or an item under review (never a traceback of the grader's), a line for one that passed.
``RecordedGrades`` (nbgrader's SaveAutoGrades step, ``save_grades.py``) writes each automatic score from the
record, keeps the instructor's manual scores and extra credit, and appends the record to the store. The test cells'
own text and tags are never run, so nothing a student writes in them changes a grade; ``TrustedMetadata``
(``metadata.py``) makes every cell's metadata the instructor's and puts deleted test cells back.

How a run grades (seed, sandbox, replay, who grades) is nbgrader configuration (``TrustedExecute``'s traits, set by
``python -m autograder grade`` through ``grading.nbgrader_api``); no module-level value or environment variable
carries it. Plain ``nbgrader autograde`` and the formgrader's button take this path too (``nbgrader_config.py``).
"""

import re

from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute
from traitlets import Bool, Int, Unicode

from autograder.engine import notebooks
from autograder.engine.records import KeptResults, RecordStore, apply_decisions, new_record, who
from autograder.engine.verdict import Verdict
from autograder.nbgrader_plugins.gradebook_schema import read_in_process
from autograder.spec import new_run_seed

read_in_process()   # a new gradebook's schema version without an `alembic heads` subprocess (2.2 to 2.9 s each)

RECORD = "autograder_record"   # this run's verdict record in nbgrader's resources (Execute -> SaveAutoGrades)


class TrustedExecute(Execute):
    """Grades the notebook the trusted way and leaves this run's verdict record in nbgrader's resources (the
    ``RecordedGrades`` step writes the gradebook from it and appends it to the record store). How it grades is
    nbgrader configuration, set by the course's ``nbgrader_config.py`` and by ``python -m autograder grade``."""

    course_root = Unicode("", help="the course directory (records and kept results live there)").tag(config=True)
    seed = Int(-1, help="the hidden variants' seed; -1: a new one per notebook (recorded)").tag(config=True)
    sandbox = Bool(True, help="False: students' code runs unconfined (grade --no-sandbox); recorded").tag(config=True)
    replay = Bool(False, help="record the worker's result kept in grading-results/ (the batch graded it) when it "
                              "was graded on the very cells nbgrader reads").tag(config=True)
    graded_by = Unicode("nbgrader autograde", help="how this run grades, for the record").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        # the engine (torch with it) is imported where a notebook is graded, not where the course's configuration is
        # loaded: every nbgrader command loads it (export, generate_feedback, db), and torch took 2 to 2.5 s of each
        from autograder.engine.jobs import cells_digest, grade_from_data, grade_job_here, submitted_facts, with_notes
        from autograder.engine.trusted_runner import TRUSTED_PROBLEM

        info = (resources or {}).get("nbgrader") or {}
        topic, student = info.get("assignment"), info.get("student")
        course = self.course_root or "."
        cells = notebooks.code_cells(nb, topic)
        done = KeptResults(course).get(student, topic) if self.replay else None
        problems = []
        if done is not None and done.get("cells_digest") != cells_digest(cells):
            problems.append("the notebook nbgrader read is not the one graded by the worker (changed since?): "
                            "graded again here")
            self.log.warning("%s %s", TRUSTED_PROBLEM, problems[-1])
            done = None
        seed = self.seed if self.seed >= 0 else new_run_seed()
        data = done if done is not None else grade_job_here(topic, cells, seed=seed, sandbox=self.sandbox)
        facts = submitted_facts(course, student, topic, info.get("notebook") or topic)
        record = new_record(student, topic, items=with_notes(data.get("items", []), facts["notes"]),
                            seed=data.get("seed", seed), digest=facts["digest"], graded_by=who(self.graded_by),
                            sandboxed=data.get("sandboxed", self.sandbox),
                            problems=[*problems, *facts["problems"], *data.get("problems", [])],
                            worker=data.get("worker", ""), gpu_worker=data.get("gpu_worker") or "",
                            peak_rss_mb=data.get("peak_rss_mb", 0.0), seconds=data.get("seconds", 0.0))
        decided = apply_decisions(record, RecordStore(course).decisions(student, topic))   # kept across regrades
        resources[RECORD] = record
        grade = grade_from_data(data)
        if decided:
            now = {i["item"]: Verdict.from_dict(i) for i in record["items"] if i["item"] in decided}
            grade.items = [now.get(r.item, r) for r in grade.items]
        write_verdicts(nb, topic, grade)
        return nb, resources


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
            cell["outputs"].append(new_output(**results[key].to_feedback()))
        elif key in outcomes:
            outcome = outcomes[key]
            printed, traceback = split_traceback(outcome.output, outcome.error)
            if printed:
                cell["outputs"].append(new_output("stream", name="stdout", text=printed))
            if outcome.error:
                cell["outputs"].append(new_output("error", ename=outcome.error_type or "Error",
                                                  evalue=outcome.error_message or outcome.error,
                                                  traceback=traceback or [outcome.error]))


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def split_traceback(output, error):
    """``(what the cell printed, the traceback's lines)``: the worker's output ends with the traceback it printed
    for ``error`` (IPython's, from its dashed line to "NotImplementedError: ..."), which the error output shows; kept
    in the printed text too, the error was shown twice. ``(output, [])`` when the output holds no such traceback."""
    lines = (output or "").splitlines(keepends=True)
    plain = [ANSI.sub("", line).rstrip() for line in lines]
    if not error or not plain or plain[-1] != error.rstrip():
        return output, []
    start = max((i for i, line in enumerate(plain) if set(line) == {"-"} and len(line) >= 20), default=None)
    if start is None:
        return output, []
    return "".join(lines[:start]), [line.rstrip("\n") for line in lines[start:]]
