"""Export grades: CSV (one table per assignment, or one wide table), and Gradescope's ``results.json``.

Scores come from nbgrader's gradebook as it stands (manual scores and extra credit included), pending GPU items,
grader errors and each check's message from the verdicts of the record in force (``current_grades``, through
``grading.load_report``); item names and points come from the grading spec, so a missing submission shows its full
maximum. A gradebook that is missing or does not match the records stops every export before it writes anything
(``gradebook_state``).
"""

import csv
import json
from pathlib import Path

from autograder.checks import items_of, max_points
from autograder.course.canvas import roster_arguments
from autograder.course.current_grades import verdicts_in_force
from autograder.course.grading import load_report, points, score_after_penalty
from autograder.engine.verdict import GRADER_ERROR, PENDING
from autograder.gradescope.results import gradescope_results

# score: the points earned, before any late penalty; late_penalty: the points taken for lateness (nbgrader's);
# total: what counts, score - late_penalty
STATUS_COLUMNS = ["student", "status", "score", "max_score", "pending", "problems", "submitted_at", "due",
                  "seconds_late", "late_percent", "late_penalty", "total"]

# the nearest other submission or course source by similarity, and its score ("ana 0.93"; docs/similarity.md):
# evidence for a person to look at, never a grade change
NEAREST_COLUMN = "nearest_neighbour"


def _records(report, assignment):
    return [report[key] for key in sorted(report) if report[key]["assignment"] == assignment]




def _item_cell(record, verdicts, item):
    verdict = verdicts[item.id]
    return verdict.csv_cell() if verdict.status in (GRADER_ERROR, PENDING) or item.id in record.get("grades", {}) \
        else ""


def export_assignment_csv(course, path, assignment):
    """One row per student, a column per graded item (``pending`` where an item waits for a GPU), and the nearest
    neighbour by similarity."""
    from autograder.course.similarity import nearest_column

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


# ------------------------------------------------------------------ the command line

def arguments(parser):
    """The command's arguments (``autograder/cli.py`` lists the commands)."""
    parser.add_argument("assignments", nargs="*", help="only these assignments (default: all)")
    parser.add_argument("--csv", metavar="FILE", help="one table per assignment (FILE-<assignment>.csv; FILE itself for "
                                                       "one assignment): a row per student, a column per graded item")
    parser.add_argument("--wide", action="store_true", help="with --csv: one table, a row per student, a column per "
                                                            "assignment and the total")
    parser.add_argument("--gradescope", metavar="DIR", help="write DIR/<student>/<assignment>/results.json")
    parser.add_argument("--canvas", metavar="FILE", help="write FILE: Canvas's gradebook import CSV (a column per "
                                                          "assignment, scores after the late penalty); needs --roster")
    roster_arguments(parser, "with --canvas: Canvas's gradebook export (Student, ID, SIS User ID, SIS Login ID, Section, ...)")
    parser.add_argument("--canvas-column", action="append", default=[], metavar="ASSIGNMENT=TITLE (ID)",
                        help="with --canvas: the Canvas column of an assignment (default: the roster's column titled "
                             "like the assignment, else its name)")


def from_command_line(args, parser):
    """``python -m autograder export``: what the command prints, and its exit status."""
    from autograder.commands.build import topics
    assignments = args.assignments or topics(args.course)
    if not (args.csv or args.gradescope or args.canvas):
        parser.error("export needs --csv FILE, --gradescope DIR and/or --canvas FILE --roster CSV")
    if args.canvas:
        from autograder.course.canvas import export_canvas
        if not args.roster:
            parser.error("export --canvas needs --roster CSV (Canvas's gradebook export: its ids)")
        columns = dict(c.split("=", 1) for c in args.canvas_column if "=" in c)
        left_out = export_canvas(args.course, args.canvas, assignments, args.roster, args.id_column, columns)
        print(f"wrote {args.canvas}" + (f"; not in the roster, so not exported: {', '.join(left_out)}"
                                        if left_out else ""))
    if args.csv:
        for path in export_csv(args.course, args.csv, assignments, wide=args.wide):
            print(f"wrote {path}")
    if args.gradescope:
        print(f"wrote {len(export_gradescope(args.course, args.gradescope, assignments))} results.json files")
    return 0
