"""One graded item's verdict: the one shape every store and every reader of a grade shares.

A check's outcome (``results.grade_item``) is a :class:`Verdict`; the job's data and the record
(``records``: ``grading-records/<student>/<assignment>.json``) hold it as :meth:`Verdict.to_dict`, read back with
:meth:`Verdict.from_dict`; the test cell's output is :meth:`Verdict.to_feedback`, nbgrader's gradebook score
:meth:`Verdict.to_gradebook`, Gradescope's test :meth:`Verdict.to_gradescope`, the CSV's item
:meth:`Verdict.to_csv_row`. What a whole submission's verdicts say by status (pending, grader errors, under review,
the messages) is :func:`by_status`, for the grades in force and Gradescope alike.

Nothing here reads a message back: what decides (the status, the failure's kind, whether an item waits for a
GPU) is a field.
"""

from dataclasses import asdict, dataclass, field, fields

PASSED, FAILED, PENDING = "passed", "failed", "pending"
GRADER_ERROR = "grader error"      # the grader's own code raised: no points until a regrade after the fix
UNDER_REVIEW = "under review"      # an instructor decides (a construct that only serves to evade grading)
STATUSES = (PASSED, FAILED, PENDING, GRADER_ERROR, UNDER_REVIEW)
PENDING_TAG = "pending: needs a GPU"
CSV_COLUMNS = ("item", "check", "status", "score", "max_score", "kind", "message", "note")


@dataclass
class Verdict:
    """One graded item of one submission, as the grader decided it (the record keeps it with its history)."""

    item: str
    """The graded item's id, e.g. ``"softmax_forward"`` (the spec's; its test cell is ``test_<item>``)."""
    check: str
    """The check function a student calls, e.g. ``"check_softmax_forward"``."""
    status: str
    """One of :data:`STATUSES`: "passed", "failed", "pending" (a GPU item on a machine without one), "grader error"
    (the grader's own code raised), "under review" (an instructor decides)."""
    score: float
    """Points scored: all of ``max_score`` when every variant passed, else 0."""
    max_score: float
    """The item's points in the spec."""
    message: str = ""
    """For the student, when it did not pass (or a note): what failed, on what input, and a hint ("Hint: ...");
    never a traceback of the grader's. "This looks like: <mistake>" is added by ``feedback.name_mistake``."""
    seconds: float = 0.0
    """Wall time of all its variants."""
    measurements: dict = field(default_factory=dict)
    """Ratios, op counts, ... when the check reports them."""
    evidence: dict = field(default_factory=dict)
    """What the verdict rests on: the variants run, hidden or not, the seed, the kinds of evidence; ``review`` (the
    constructs found, or the measurement doubted, and ``on_accept``: the verdict if the instructor accepts it, the
    reason for the review) and ``looks_like`` (the known mistake named)."""
    note: str = ""
    """For the instructor: how it was graded (its test cell deleted: graded from the spec; a review's decision)."""
    detail: str = ""
    """For the instructor only: the grader's traceback of a grader error."""
    kind: str = ""
    """What kind of failure, when it failed (``autograder.errors``: "wrong value", "raised: ValueError", or, where
    the check names none, the place that raised it, "failed at <module>.<function>:<n>"): set where the failure was
    raised, never read from the message, so that a reworded message keeps its kind. With the item, what the grader
    matches with the known mistakes (``checks/<topic>/mistakes.py``)."""
    cause: str = ""
    """The student's exception in one line when one made it fail: items that share it are reported once
    (``feedback.same_cause``)."""

    @property
    def passed(self):
        return self.status == PASSED

    @property
    def review(self):
        """Why a person decides (``evidence["review"]``: the constructs and ``on_accept``), or None."""
        return (self.evidence or {}).get("review")

    # ------------------------------------------------------------------ the record

    def to_dict(self):
        """Plain JSON data: the item of a job's data and of a record."""
        return asdict(self)

    as_dict = to_dict

    @classmethod
    def from_dict(cls, data):
        """The verdict back from :meth:`to_dict` (a record written before a field existed reads with its default;
        keys this version does not know are left out)."""
        known = {f.name for f in fields(cls)}
        found = {"item": "", "check": "", "status": FAILED, "score": 0.0, "max_score": 0.0}
        found.update((k, v) for k, v in data.items() if k in known)
        return cls(**found)

    # ------------------------------------------------------------------ what each reader gets

    def to_gradebook(self):
        """nbgrader's gradebook's automatic score of its test cell: ``{"name", "auto_score", "needs_manual_grade"}``
        (a grader error or an item under review is marked for a person; an instructor's manual score is nbgrader's
        to keep)."""
        return {"name": f"test_{self.item}", "auto_score": float(self.score),
                "needs_manual_grade": self.status in (GRADER_ERROR, UNDER_REVIEW)}

    def to_feedback(self):
        """The test cell's output in the student's feedback, as a Jupyter output (``nbformat.v4.new_output``'s
        arguments): a line for a pass, a neutral line for a grader error or an item under review (never a traceback
        of the grader's), the check's message as the cell's error otherwise."""
        if self.status == PASSED:
            return {"output_type": "stream", "name": "stdout", "text": f"{self.check}: passed\n"}
        if self.status in (GRADER_ERROR, UNDER_REVIEW):
            return {"output_type": "stream", "name": "stdout", "text": f"{self.check}: {self.message}\n"}
        name = "PendingGPU" if self.status == PENDING else "CheckFailure"
        return {"output_type": "error", "ename": name, "evalue": self.message,
                "traceback": [f"{name}: {self.message}"]}

    def to_gradescope(self, *, missing=False):
        """Gradescope's test (``results.json``'s ``tests[]``): name, score, max_score, status, the output and the
        tags a person reads. ``missing``: nothing was submitted."""
        passed = self.status not in (PENDING, GRADER_ERROR) and bool(self.max_score) and \
            self.score >= self.max_score          # the gradebook's score, an instructor's manual one included
        entry = {"name": self.item, "score": self.score, "max_score": self.max_score,
                 "status": "passed" if passed else "failed"}
        if self.status == PENDING:
            entry["output"] = self.message or PENDING_TAG
            entry["tags"] = [PENDING_TAG]
        elif self.status == GRADER_ERROR:     # the grader's problem, not the student's: the record's neutral message
            entry["output"] = self.message
            entry["tags"] = ["grader error: to be regraded"]
        elif self.message and self.status != PASSED:
            entry["output"] = self.message
            if self.status == UNDER_REVIEW:
                entry["tags"] = ["under review: the instructor decides"]
        elif missing:
            entry["output"] = "not submitted"
        return entry

    def csv_cell(self):
        """The item's cell in an assignment's CSV export: its points, or "pending" / "grader error"."""
        if self.status in (GRADER_ERROR, PENDING):
            return self.status
        return f"{self.score:g}"

    def to_csv_row(self):
        """One row of :data:`CSV_COLUMNS`."""
        return [self.item, self.check, self.status, f"{self.score:g}", f"{self.max_score:g}", self.kind,
                self.message, self.note]


def by_status(verdicts):
    """What a submission's verdicts say as a whole: ``{"pending", "grader_errors", "under_review"}`` (item ids) and
    ``messages`` (``{item: message}`` of each item that did not pass and has one)."""
    return {"pending": [v.item for v in verdicts if v.status == PENDING],
            "grader_errors": [v.item for v in verdicts if v.status == GRADER_ERROR],
            "under_review": [v.item for v in verdicts if v.status == UNDER_REVIEW],
            "messages": {v.item: v.message for v in verdicts if v.status != PASSED and v.message}}
