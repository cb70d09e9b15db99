"""A submission's lateness in nbgrader's gradebook, brought up to date with the course's deadlines and read back
(docs/deadlines.md).

:func:`write_deadlines` writes the due date and every extension from ``settings.deadlines`` into the gradebook;
:func:`settle` does what nbgrader's autograde would for a submission whose grade is kept from an earlier run, and
returns what the records, the exports and the feedback show (:func:`lateness_fields`). nbgrader's own steps that
apply the policy are in ``autograder/nbgrader_plugins/late.py``.
"""

import datetime

from autograder.course.late_policy import (DeadlineError, check_extensions_have_due_dates, due_date, extension_hours,
                                           lateness)
from autograder.settings import settings


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
