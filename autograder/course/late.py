"""Deadlines and late work, applied through nbgrader (docs/deadlines.md).

The policy lives in ``settings.deadlines``: a due date per assignment, a grace period, a penalty per started day
late up to a cap, a cut-off after which a submission scores 0, and per-student extensions. nbgrader keeps the
facts: the assignment's ``duedate``, the student's ``SubmittedAssignment.extension`` and ``timestamp`` (from the
submission's ``timestamp.txt``), hence ``total_seconds_late``; and it applies the penalty per notebook in its
autograde step ``AssignLatePenalties`` through a ``LateSubmissionPlugin``. :class:`LatePolicy` is that plugin and
:class:`DeadlinePenalties` that step, which first writes the due date and every extension on it from the settings
into the gradebook (together: :func:`write_deadlines`), so plain ``nbgrader autograde``, the formgrader and ``python -m autograder grade`` agree
(``nbgrader_config.py``). :func:`settle` does the same for a submission whose grade is kept from an earlier run,
and reads back what the records, the exports and the feedback show.
"""

import datetime

from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import AssignLatePenalties
from traitlets import Type

from ..settings import settings, use_course
from .late_policy import (DAY_S, DeadlineError, Lateness, check_deadlines,  # noqa: F401 - re-exported
                          check_extensions_have_due_dates, due_date, duration_text, extension_hours, lateness,
                          penalty_percent)
from .trusted_execute import FeedbackStep


# ------------------------------------------------------------------ nbgrader

class LatePolicy(LateSubmissionPlugin):
    """nbgrader's late-submission plugin with the course's policy (``settings.deadlines``): the points a notebook
    that earned ``score`` loses for ``total_seconds_late`` (nbgrader counts them from the due date with the
    student's extension)."""

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        late = lateness(score, total_seconds_late)
        self.log.info("%s: %s", student_id, late.describe())
        return late.points


def _naive_utc(when):
    return None if when is None else when.astimezone(datetime.timezone.utc).replace(tzinfo=None)


def write_deadlines(gradebook, assignment):
    """The assignment's due date and every extension on it, from the settings into nbgrader's gradebook, together:
    ``Assignment.duedate`` (none when the settings have none) and each of its submissions' ``extension``, so that
    the two never disagree. DeadlineError, before anything is written, for an extension without a due date."""
    due = due_date(assignment)
    extensions = {student: extension_hours(student, assignment) for student in settings.deadlines.extensions}
    if due is None and any(extensions.values()):
        check_extensions_have_due_dates([assignment])
    record = gradebook.find_assignment(assignment)
    record.duedate = _naive_utc(due)
    for submission in record.submissions:
        hours = extensions.get(submission.student.id, 0.0)
        submission.extension = datetime.timedelta(hours=hours) if hours else None
    gradebook.db.commit()


class DeadlinePenalties(AssignLatePenalties):
    """nbgrader's ``AssignLatePenalties`` with :class:`LatePolicy`, after writing the assignment's due date and the
    student's extension from the settings into the gradebook (nbgrader's own autograde reads the submission time
    from ``timestamp.txt`` before this step)."""

    plugin_class = Type(LatePolicy, klass=LateSubmissionPlugin).tag(config=True)

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        info = resources["nbgrader"]
        root = self.config.CourseDirectory.get("root")
        if root:            # a formgrader started before course_settings.json was edited grades with the file as it is
            use_course(root)
        with Gradebook(info["db_url"]) as gradebook:
            write_deadlines(gradebook, info["assignment"])
        return super().preprocess(nb, resources)


def read_timestamp(course, student, assignment):
    """The submission time nbgrader reads (``submitted/<student>/<assignment>/timestamp.txt``), naive UTC, or None."""
    from pathlib import Path

    from nbgrader.utils import parse_utc

    path = Path(course) / "submitted" / student / assignment / "timestamp.txt"
    if not path.exists():
        return None
    text = path.read_text(encoding="utf-8", errors="replace").strip()
    if not text:
        return None
    try:
        return parse_utc(text)
    except (ValueError, OverflowError):
        raise DeadlineError(f"{path}: {text[:60]!r} is not a date and time") from None


def settle(gradebook_url, course, student, assignment):
    """Bring one submission's lateness in nbgrader's gradebook up to date with the settings and its
    ``timestamp.txt`` (due date, extension, submission time, each notebook's penalty, as nbgrader's autograde would
    have set them), and return what the records show: ``{"submitted_at", "due", "seconds_late",
    "late_percent", "late_penalty", "late_note"}``."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(gradebook_url) as gradebook:
        try:
            submission = gradebook.find_submission(assignment, student)
        except MissingEntry:
            return lateness_fields(None, None, 0.0, lateness(0.0, 0.0))
        write_deadlines(gradebook, assignment)
        submission.timestamp = read_timestamp(course, student, assignment)
        seconds = submission.total_seconds_late
        for notebook in submission.notebooks:
            notebook.late_submission_penalty = lateness(notebook.score, seconds).points if seconds > 0 else None
        gradebook.db.commit()
        return submission_lateness(submission)


def submission_lateness(submission):
    """The lateness fields of a record from nbgrader's gradebook as it stands (a ``SubmittedAssignment``)."""
    seconds = submission.total_seconds_late
    score = sum(notebook.score for notebook in submission.notebooks)
    late = lateness(score, seconds)
    late.points = round(float(submission.late_submission_penalty or 0.0), 6)   # nbgrader's sum, as it shows
    if score > 0:       # the percent the gradebook's penalty stands for (the policy in force when it was set)
        late.percent = round(late.points / score * 100, 4)
    return lateness_fields(submission.timestamp, submission.duedate, seconds, late)


def lateness_fields(timestamp, due, seconds, late):
    """The lateness fields of a record (grading.SubmissionResult) from nbgrader's facts."""
    note = ""
    if due is not None:
        note = late.describe() if timestamp is not None else \
            "no submission time (no timestamp.txt): not checked against the due date"
    return {"submitted_at": _iso(timestamp), "due": _iso(due), "seconds_late": float(seconds),
            "late_percent": late.percent, "late_penalty": late.points, "late_note": note}


def _iso(naive_utc):
    return "" if naive_utc is None else naive_utc.replace(tzinfo=datetime.timezone.utc).isoformat()


class LateNote(FeedbackStep):   # display_data_priority configurable: no warning
    """Feedback (``nbgrader generate_feedback``): a first cell that tells the student how late the submission was
    and what that cost, from nbgrader's gradebook ("late by 3 h 12 min: -10% (2.1 points)"). nbgrader's own
    template shows only the points taken."""

    def preprocess(self, nb, resources):
        from nbformat.v4 import new_markdown_cell
        from nbgrader.api import Gradebook, MissingEntry

        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gradebook:
            try:
                submission = gradebook.find_submission(info["assignment"], info["student"])
                notebook = gradebook.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
            except MissingEntry:
                return nb, resources
            if submission.duedate is None or submission.timestamp is None:
                return nb, resources
            seconds = submission.total_seconds_late
            late = lateness(notebook.score, seconds)
            recorded = round(float(notebook.late_submission_penalty or 0.0), 6)
            if abs(late.points - recorded) > 1e-6:    # graded under other deadlines than this process has: the
                share = 100 * recorded / notebook.score if notebook.score else 0.0   # gradebook's penalty stands
                late = Lateness(seconds, round(share, 2), recorded, late.grace_minutes)
            due, submitted = (f"{when:%Y-%m-%d %H:%M:%S} UTC" for when in (submission.duedate, submission.timestamp))
        text = (f"**Submission time: {late.describe()}.** Submitted {submitted}, due {due}"
                + (" (with your extension)" if submission.extension else "") + ".")
        cell = new_markdown_cell(text)
        cell.metadata["late_note"] = True
        nb.cells.insert(0, cell)
        return nb, resources
