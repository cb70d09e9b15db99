"""Export grades: CSV (one table per assignment, or one wide table), and Gradescope's ``results.json``.

Scores come from nbgrader's gradebook as it stands (manual scores and extra credit included), pending GPU items,
grader errors and each check's message from the verdicts of the record in force (``current_grades``, through
``grading.load_report``); item names and points come from the grading spec, so a missing submission shows its full
maximum. A gradebook that is missing or does not match the records stops every export before it writes anything
(``gradebook_state``).
"""

import csv
import dataclasses
import json
from pathlib import Path

from ..checks import items_of, max_points
from ..engine.verdict import FAILED, GRADER_ERROR, PENDING, Verdict
from .grading import load_report, points, score_after_penalty

# score: the points earned, before any late penalty; late_penalty: the points taken for lateness (nbgrader's);
# total: what counts, score - late_penalty
STATUS_COLUMNS = ["student", "status", "score", "max_score", "pending", "problems", "submitted_at", "due",
                  "seconds_late", "late_percent", "late_penalty", "total"]

# the nearest other submission or course source by similarity, and its score ("ana 0.93"; docs/similarity.md):
# evidence for a person to look at, never a grade change
NEAREST_COLUMN = "nearest_neighbour"


def _records(report, assignment):
    return [report[key] for key in sorted(report) if report[key]["assignment"] == assignment]


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


def _item_cell(record, verdicts, item):
    verdict = verdicts[item.id]
    return verdict.csv_cell() if verdict.status in (GRADER_ERROR, PENDING) or item.id in record.get("grades", {}) \
        else ""


def export_assignment_csv(course, path, assignment):
    """One row per student, a column per graded item (``pending`` where an item waits for a GPU), and the nearest
    neighbour by similarity."""
    from .similarity import nearest_column

    items = items_of(assignment)
    report = load_report(course)      # first: a gradebook that cannot be trusted stops it before the file is made
    neighbours = nearest_column(course, assignment)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(STATUS_COLUMNS + [item.id for item in items] + [NEAREST_COLUMN])
        for record in _records(report, assignment):
            score, _ = points(record.get("grades", {}))
            problems = record.get("problems", []) if record["status"] != "missing" else []
            writer.writerow([record["student"], record["status"], f"{score:g}", f"{max_points(assignment):g}",
                             " ".join(record.get("pending", [])), "; ".join(problems), record.get("submitted_at", ""),
                             record.get("due", ""), f"{record.get('seconds_late', 0.0):g}",
                             f"{record.get('late_percent', 0.0):g}", f"{record.get('late_penalty', 0.0):g}",
                             f"{score_after_penalty(record):g}"]
                            + [_item_cell(record, verdicts_in_force(record, assignment), item) for item in items]
                            + [neighbours.get(record["student"], "")])
    return Path(path)


def export_wide_csv(course, path, assignments):
    """One row per student: each assignment's score after any late penalty (``pending`` noted), and the total out of
    the course maximum."""
    report = load_report(course)
    students = sorted({record["student"] for record in report.values()})
    possible = sum(max_points(a) for a in assignments)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", *assignments, "total", "max_score", "pending"])
        for student in students:
            records = [report.get(f"{student}/{a}", {}) for a in assignments]
            scores = [score_after_penalty(r) for r in records]
            waiting = [f"{a}:{i}" for a, r in zip(assignments, records) for i in r.get("pending", [])]
            writer.writerow([student, *(f"{s:g}" for s in scores), f"{sum(scores):g}", f"{possible:g}",
                             " ".join(waiting)])
    return Path(path)


def export_csv(course, path, assignments, wide=False):
    """CSV files: ``path`` itself for one assignment or ``wide``, else ``<stem>-<assignment>.csv`` for each."""
    path = Path(path)
    if wide:
        return [export_wide_csv(course, path, assignments)]
    if len(assignments) == 1:
        return [export_assignment_csv(course, path, assignments[0])]
    return [export_assignment_csv(course, path.with_name(f"{path.stem}-{a}{path.suffix or '.csv'}"), a)
            for a in assignments]


def gradescope_results(record, assignment):
    """Gradescope's autograder ``results.json`` for one submission's report record, as a dict."""
    missing = record.get("status") == "missing"
    tests = [verdict.to_gradescope(missing=missing) for verdict in verdicts_in_force(record, assignment).values()]
    # the tests' scores are the points earned; the submission's score is after the late penalty
    result = {"score": round(sum(t["score"] for t in tests) - (record.get("late_penalty") or 0.0), 6), "tests": tests,
              "visibility": "visible"}
    notes = list(record.get("problems", []))
    if record.get("late_penalty"):
        notes.append(f"{record['late_note']}; score after the penalty {result['score']:g}")
    elif record.get("seconds_late") and record.get("late_note"):
        notes.append(record["late_note"])
    if record.get("pending"):
        notes.append(f"pending: {', '.join(record['pending'])} need(s) a GPU and score 0 until graded on one")
    if notes:
        result["output"] = "\n".join(notes)
    return result


def export_gradescope(course, out_dir, assignments):
    """Write ``out_dir/<student>/<assignment>/results.json`` for every recorded submission."""
    written = []
    report = load_report(course)
    for key in sorted(report):
        student, assignment = key.split("/")
        if assignment not in assignments:
            continue
        target = Path(out_dir) / student / assignment / "results.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(gradescope_results(report[key], assignment), indent=1), encoding="utf-8")
        written.append(target)
    return written
