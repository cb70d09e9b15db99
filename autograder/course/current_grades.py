"""The grades in force: each submission's verdict record in force, with nbgrader's gradebook's current scores.

This is what the printed gradebook, the CSV, Gradescope and Canvas exports and ``pending`` read
(``grading.load_report``): the items' statuses, messages and the run's facts come from the record store
(``records``), the points from the gradebook as it stands (an automatic score, or the instructor's manual score, plus
any extra credit; then nbgrader's late penalty), so an adjustment made in the formgrader shows in every export.
A submission graded by the formgrader's button or plain ``nbgrader autograde`` is there as soon as it is graded.

Each entry (``{"student/assignment": entry}``) has the record's fields and: ``grades`` (``{item: [score, max]}``),
``auto``, ``manual`` and ``extra_credit`` (``{item: points}``, the gradebook's, where set), ``pending``,
``grader_errors``, ``under_review`` (item ids), ``messages`` (``{item: student-facing message}`` of each item that
did not pass), ``notes`` (``{item: note}``) and the lateness fields (``late.lateness_fields``).
"""

import contextlib
import dataclasses
from pathlib import Path

from autograder.checks import items_of
from autograder.engine.records import RecordStore
from autograder.engine.verdict import FAILED, Verdict, by_status
from autograder.settings import settings

LATE_FIELDS = {"submitted_at": "", "due": "", "seconds_late": 0.0, "late_percent": 0.0, "late_penalty": 0.0,
               "late_note": ""}


def zero_grades(assignment):
    """``{item: [0, points]}`` for every graded item of ``assignment``."""
    return {item.id: [0.0, item.points] for item in items_of(assignment)}


def entry_of(record, scores=None, late=None):
    """One submission's entry from its ``record`` and the gradebook's ``scores`` (``{item: {"score", "max",
    "auto", "manual", "extra_credit"}}``; None: not in the gradebook) and lateness."""
    entry = {key: value for key, value in record.items() if key != "items"}
    items = record.get("items", [])
    verdicts = [Verdict.from_dict(i) for i in items]
    entry.update(**by_status(verdicts), notes={v.item: v.note for v in verdicts if v.note}, items=items,
                 **LATE_FIELDS)
    grades = zero_grades(record["assignment"])
    for verdict in verdicts:
        grades[verdict.item] = [float(verdict.score), float(verdict.max_score)]
    entry["auto"], entry["manual"], entry["extra_credit"] = {}, {}, {}
    if scores and record.get("status") != "missing":
        for item_id, found in scores.items():
            grades[item_id] = [found["score"], found["max"]]
            entry["auto"][item_id] = found["auto"]
            if found["manual"] is not None:
                entry["manual"][item_id] = found["manual"]
            if found["extra_credit"] is not None:
                entry["extra_credit"][item_id] = found["extra_credit"]
    entry["grades"] = grades
    if late and record.get("status") == "graded":
        entry.update(late)
    return entry


def gradebook_scores(gradebook, student, assignment):
    """``(scores, lateness)`` of one submission in an open nbgrader ``Gradebook``; ``(None, None)`` if absent."""
    from nbgrader.api import MissingEntry

    from autograder.course.lateness import submission_lateness

    try:
        submission = gradebook.find_submission(assignment, student)
    except MissingEntry:
        return None, None
    scores = {}
    for nb in submission.notebooks:
        for grade in nb.grades:
            if grade.cell_type == "code":
                scores[grade.name.removeprefix("test_")] = {
                    "score": float(grade.score), "max": float(grade.max_score),
                    "auto": None if grade.auto_score is None else float(grade.auto_score),
                    "manual": None if grade.manual_score is None else float(grade.manual_score),
                    "extra_credit": None if grade.extra_credit is None else float(grade.extra_credit)}
    return scores, submission_lateness(submission)


_REGRADING = set()     # courses whose gradebook `grade --force` is rebuilding in this process: read unchecked


@contextlib.contextmanager
def unchecked_while_regrading(course, force=True):
    """While ``grade --force`` grades every submission again (``force``), the gradebook it rebuilds is read without
    the checks of ``gradebook_state`` (a missing one, or one without some graded submission, is what it repairs)."""
    key = str(Path(course).resolve())
    added = force and key not in _REGRADING
    if added:
        _REGRADING.add(key)
    try:
        yield
    finally:
        if added:
            _REGRADING.discard(key)


def current(course, only=None):
    """``{"student/assignment": entry}`` for every recorded submission (see the module's docstring); with ``only``
    (keys), for those submissions alone. GradebookStateError (``gradebook_state``: what is missing, and the repair)
    when the gradebook is missing or does not match the records: never an empty gradebook made in its place."""
    from nbgrader.api import Gradebook

    from autograder.course.gradebook_state import check_missing, check_open

    records = RecordStore(course).all_latest(only)
    if not records:
        return {}
    found = {}
    checked = str(Path(course).resolve()) not in _REGRADING
    if checked:
        check_missing(course, records)
    with Gradebook(settings.grading.gradebook_url(course)) as gradebook:
        if checked:
            check_open(gradebook, records)
        for key, (record, settled) in records.items():
            scores, late = gradebook_scores(gradebook, record["student"], record["assignment"])
            found[key] = entry_of(record, scores, settled_or(late, settled))
    return found


def settled_or(late, settled):
    """The lateness as last settled under the deadlines of its run (``grading.settle_lateness``), while the
    gradebook still holds that penalty; else as read from the gradebook now."""
    if late is not None and settled and settled.get("late_penalty") == late["late_penalty"] and \
            settled.get("due") == late["due"] and settled.get("submitted_at") == late["submitted_at"]:
        return settled
    return late


def verdicts_in_force(record, assignment):
    """``{item id: Verdict}`` of every graded item of ``assignment`` in a submission's entry of the grades in force
    (``current_grades``): the record's verdict, with the gradebook's points (a manual score, extra credit); an item
    the record lacks (nothing submitted, or not graded) failed with 0 of its points and no message."""
    recorded = {i["item"]: Verdict.from_dict(i) for i in record.get("items", [])}
    grades = record.get("grades", {})
    found = {}
    for item in items_of(assignment):
        verdict = recorded.get(item.id) or Verdict(item.id, item.name, FAILED, 0.0, item.points)
        score, maximum = grades.get(item.id, [0.0, item.points])
        found[item.id] = dataclasses.replace(verdict, score=score, max_score=maximum)
    return found
