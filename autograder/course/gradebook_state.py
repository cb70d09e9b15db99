"""Whether nbgrader's gradebook can be trusted, checked before anything reads it (exports, ``pending``, the printed
gradebook, the item analysis, ``nbgrader generate_feedback``).

The gradebook holds what the verdict records (``grading-records/``) do not: the scores in force (an instructor's
manual scores and extra credit), the due dates, extensions and late penalties. A command that opened a missing
gradebook would create an empty one and report every late student without the penalty; one that read a due date
and its extensions out of step (an extension where the assignment has no due date: left by an older version, or by
hand) would crash inside nbgrader. Each is refused here with one line that says what is missing and the command that
repairs it.
"""

import os

from autograder.engine.records import RECORDS, RecordStore
from autograder.settings import COURSE_SETTINGS, settings


class GradebookStateError(ValueError):
    """The gradebook is missing or does not match the records: one line, with the repair."""


def gradebook_file(url):
    """The SQLite file of a gradebook address, or None (another database)."""
    prefix = "sqlite:///"
    return url[len(prefix):] if url.startswith(prefix) else None


def _first(problems):
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return problems[0] + more


def check_missing(course, records, url=None):
    """GradebookStateError when ``records`` (``RecordStore.all_latest``) exist but the SQLite gradebook does not."""
    url = url or settings.grading.gradebook_url(course)
    path = gradebook_file(url)
    graded = sum(record.get("status") == "graded" for record, _ in records.values())
    if graded and path is not None and not os.path.exists(path):
        raise GradebookStateError(
            f"no gradebook: {path} does not exist, but {RECORDS}/ holds {graded} graded submission(s); their "
            "scores and late penalties live in the gradebook. Put it back (from a backup), or grade again: "
            "python -m autograder grade --force")


def check_open(gradebook, records):
    """GradebookStateError when an open nbgrader ``Gradebook`` does not match ``records``: a submission graded in the
    records that it does not have, or an extension on an assignment without a due date."""
    from nbgrader.api import MissingEntry

    problems = []
    for key, (record, _) in sorted(records.items()):
        if record.get("status") != "graded":
            continue
        try:
            gradebook.find_submission(record["assignment"], record["student"])
        except MissingEntry:
            problems.append(f"the gradebook has no grades for {key}, which {RECORDS}/ records as graded (a gradebook "
                            "from elsewhere, or a new one?): put the course's gradebook back, or grade it again: "
                            f"python -m autograder grade {record['assignment']} --student {record['student']} --force")
    for assignment in gradebook.assignments:
        if assignment.duedate is not None:
            continue
        extended = sorted(s.student.id for s in assignment.submissions if s.extension is not None)
        if extended:
            problems.append(f"the gradebook gives {', '.join(extended)} an extension on {assignment.name}, which has "
                            "no due date there (left by an older version, or by hand): python -m autograder grade "
                            f"{assignment.name} writes every due date and extension from {COURSE_SETTINGS}")
    if problems:
        raise GradebookStateError(_first(problems))


def require_gradebook(course):
    """GradebookStateError unless the course's gradebook exists (where there are records) and matches them; opens it
    only when it exists (never creates one)."""
    from nbgrader.api import Gradebook

    records = RecordStore(course).all_latest()
    url = settings.grading.gradebook_url(course)
    check_missing(course, records, url)
    path = gradebook_file(url)
    if path is not None and not os.path.exists(path):
        return
    with Gradebook(url) as gradebook:
        check_open(gradebook, records)


