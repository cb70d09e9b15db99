"""The gradebook as people read it: a student x assignment table, then each graded item's points.

Everything comes from the grades in force (``grading.load_report``: the verdict records with the gradebook's
current scores) and the grading spec: an assignment a student did
not submit counts 0 out of its full points, so every total is out of the course's maximum.
"""

from autograder.checks import items_of, max_points
from autograder.course.grading import load_report, points, score_after_penalty


def _cell(record, assignment):
    if record is None:
        return f"- /{max_points(assignment):g}"
    score, maximum = points(record.get("grades") or {})
    if record["status"] == "missing":
        return f"missing 0/{max_points(assignment):g}"
    if record["status"] == "error":
        return f"ERROR {score:g}/{maximum:g}"
    marks = (" !" if record.get("problems") else "") + (" (GPU pending)" if record.get("pending") else "") + (
        " (GRADER ERROR)" if record.get("grader_errors") else "") + (" (under review)" if record.get("under_review") else "")
    if record.get("late_penalty"):
        marks = f" (late -{record.get('late_percent', 0):g}%)" + marks
    return f"{score_after_penalty(record):g}/{maximum:g}" + marks


def _table(rows, header):
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join("{:<%d}" % w for w in widths)
    out = [line.format(*header), line.format(*("-" * w for w in widths))]
    out += [line.format(*map(str, r)) for r in rows]
    return "\n".join(out)


def _score(record, item):
    if record is None:
        return "-"
    if item.id in record.get("grader_errors", []):
        return "grader error"
    if item.id in record.get("pending", []):
        return "pending"
    if item.id in record.get("under_review", []):
        return "under review"
    grades = record.get("grades", {})
    return "{:g}/{:g}".format(*grades[item.id]) if item.id in grades else "-"


def gradebook_text(assignments, students, report):
    """The whole printed gradebook (also used by tests)."""
    parts = ["", "GRADEBOOK (points scored, after any late penalty / points possible; '!' marks a submission with "
                 "problems; a missing submission scores 0)", ""]
    possible = sum(max_points(a) for a in assignments)
    rows = []
    for student in students:
        records = [report.get(f"{student}/{a}") for a in assignments]
        total = sum(score_after_penalty(r or {}) for r in records)
        rows.append([student, *(_cell(r, a) for r, a in zip(records, assignments)), f"{total:g}/{possible:g}"])
    parts.append(_table(rows, ["student", *assignments, "total"]))
    problems = [f"  {key}: {p}" for key, record in sorted(report.items()) for p in record.get("problems", [])
                if key.split("/")[0] in students and key.split("/")[1] in assignments and record["status"] != "missing"]
    if problems:
        parts += ["", "Problems found while grading:", *problems]
    late = [f"  {key}: {record['late_note']}" for key, record in sorted(report.items()) if record.get("late_note")
            and record.get("seconds_late") and record["student"] in students and record["assignment"] in assignments]
    if late:
        parts += ["", "Late submissions (points per item below are before the penalty):", *late]
    waiting = pending_lines(report, assignments, students)
    if waiting:
        parts += ["", "Pending: items that need a GPU (0 points until graded on one; "
                      "`python -m autograder pending` lists them):", *waiting]
    for assignment in assignments:
        rows = [[item.id, *(_score(report.get(f"{s}/{assignment}"), item) for s in students)]
                for item in items_of(assignment)]
        parts += ["", f"{assignment}: points per graded item", _table(rows, ["item", *students])]
    return "\n".join(parts)


def pending_lines(report, assignments=None, students=None):
    return [f"  {key}: {', '.join(record['pending'])}" for key, record in sorted(report.items())
            if record.get("pending") and (assignments is None or record["assignment"] in assignments)
            and (students is None or record["student"] in students)]


def pending_text(course):
    """What ``python -m autograder pending`` prints: the submissions whose GPU items wait for a GPU, and how to
    grade them."""
    lines = pending_lines(load_report(course))
    if not lines:
        return "No submission is waiting for a GPU."
    return "\n".join([f"{len(lines)} submission(s) have items waiting for a GPU (0 points until graded on one):",
                      *lines, "", "On a machine with a GPU and this course: python -m autograder grade --pending"])


def print_gradebook(assignments, students, report):
    print(gradebook_text(assignments, students, report), flush=True)


# ------------------------------------------------------------------ the command line

def arguments(parser):
    """The command's arguments (``autograder/cli.py`` lists the commands)."""


def from_command_line(args, parser):
    """``python -m autograder pending``: what the command prints, and its exit status."""
    print(pending_text(args.course))
    return 0
