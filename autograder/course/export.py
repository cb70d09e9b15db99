"""Export grades: a CSV with one row per student and assignment and a column per check, and
Gradescope's ``results.json`` (one per student and assignment).

Scores come from the grading report (which mirrors nbgrader's gradebook and adds
the problems found); the failure message of each check comes from the autograded
notebook's error output, so a student sees what to fix.
"""

import csv
import json
from pathlib import Path

from . import notebooks
from .grading import expected_test_ids, load_report, points


def failure_messages(course, student, assignment):
    """``{grade_id: error text}`` from ``autograded/<student>/<assignment>/<assignment>.ipynb``."""
    path = Path(course) / "autograded" / student / assignment / f"{assignment}.ipynb"
    try:
        nb = notebooks.read(path)
    except notebooks.NotebookError:
        return {}
    found = {}
    for cell in nb["cells"]:
        if not notebooks.is_graded_test(cell):
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                found[notebooks.grade_id(cell)] = f"{output.get('ename')}: {output.get('evalue')}"
    return found


def export_csv(course, path, assignments):
    report = load_report(course)
    columns = ["student", "assignment", "status", "score", "max_score", "problems"]
    checks = {a: expected_test_ids(course, a) for a in assignments}
    all_checks = [c for a in assignments for c in checks[a] if c not in columns]
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns + list(dict.fromkeys(all_checks)))
        for key in sorted(report):
            record = report[key]
            if record["assignment"] not in assignments:
                continue
            grades = record.get("grades", {})
            score, maximum = points(grades)
            row = [record["student"], record["assignment"], record["status"], f"{score:g}", f"{maximum:g}",
                   "; ".join(record.get("problems", []))]
            row += [f"{grades[c][0]:g}" if c in grades else "" for c in dict.fromkeys(all_checks)]
            writer.writerow(row)
    return path


def gradescope_results(course, student, assignment):
    """Gradescope's autograder ``results.json`` for one submission, as a dict."""
    record = load_report(course).get(f"{student}/{assignment}", {})
    grades = record.get("grades", {})
    messages = failure_messages(course, student, assignment)
    tests = []
    for grade_id in expected_test_ids(course, assignment):
        score, maximum = grades.get(grade_id, [0.0, 0.0])
        entry = {"name": grade_id, "score": score, "max_score": maximum,
                 "status": "passed" if maximum and score >= maximum else "failed"}
        if grade_id in messages:
            entry["output"] = messages[grade_id]
        tests.append(entry)
    result = {"score": sum(t["score"] for t in tests), "tests": tests, "visibility": "visible"}
    if record.get("problems"):
        result["output"] = "\n".join(record["problems"])
    return result


def export_gradescope(course, out_dir, assignments):
    """Write ``out_dir/<student>/<assignment>/results.json`` for every graded submission."""
    written = []
    for key in sorted(load_report(course)):
        student, assignment = key.split("/")
        if assignment not in assignments:
            continue
        target = Path(out_dir) / student / assignment / "results.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(gradescope_results(course, student, assignment), indent=1), encoding="utf-8")
        written.append(target)
    return written
