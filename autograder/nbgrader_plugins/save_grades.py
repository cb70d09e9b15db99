"""nbgrader's SaveAutoGrades step, made trusted: each automatic score from this run's verdict record, never from the
cells' outputs; the record appended to the store (``autograder/engine/records.py``)."""


from nbgrader.preprocessors import SaveAutoGrades
from traitlets import Unicode

from autograder.engine.records import RecordStore
from autograder.engine.verdict import Verdict
from autograder.nbgrader_plugins.execute import RECORD


class RecordedGrades(SaveAutoGrades):
    """nbgrader's SaveAutoGrades, with each automatic score taken from this run's verdict record (not from the
    cells' outputs), then the record appended to the store. An instructor's manual score and extra credit are kept
    (nbgrader's rule: a manual score marks the cell for review again); a grader error or an item under review is
    marked for review too. Without a record (``TrustedExecute`` did not run) every automatic score is 0."""

    course_root = Unicode("", help="the course directory (the record store lives there)").tag(config=True)

    def preprocess(self, nb, resources):
        verdicts = [Verdict.from_dict(i).to_gradebook() for i in (resources.get(RECORD) or {}).get("items", [])]
        self._verdicts = {v["name"]: v for v in verdicts}
        nb, resources = super().preprocess(nb, resources)
        if resources.get(RECORD):
            RecordStore(self.course_root or ".").append(resources[RECORD])
        return nb, resources

    def _add_score(self, cell, resources):
        super()._add_score(cell, resources)
        grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id,
                                          self.assignment_id, self.student_id)
        verdict = self._verdicts.get(grade.name)
        grade.auto_score = verdict["auto_score"] if verdict else 0.0
        grade.needs_manual_grade = grade.manual_score is not None or bool(verdict and verdict["needs_manual_grade"])
        self.gradebook.db.commit()
