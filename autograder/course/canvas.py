"""Canvas's files (docs/lms.md): its roster (the gradebook export), a times CSV, and the gradebook import CSV.

**Roster.** Canvas's gradebook export: ``Student, ID, SIS User ID, SIS Login ID, Section, ...``; the student id is
the ``SIS Login ID`` column by default. ``collect-zip`` maps each Canvas user id to a student with it.

**Out.** ``export_canvas`` writes the CSV Canvas's gradebook import takes: the header ``Student, ID, SIS User ID,
SIS Login ID, Section, <Assignment title> (<Canvas assignment id>)``, then a ``Points Possible`` row, then a row per
student of the roster with the score after the late penalty (blank where nothing was recorded, which Canvas leaves
unchanged).
"""

import csv
import datetime
import re

ID_COLUMN = "SIS Login ID"


ROSTER_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


class LMSError(ValueError):
    """A roster, a download or an export that cannot be used, with what is wrong."""


def read_roster(path, id_column=ID_COLUMN):
    """``{Canvas user id: row}`` from a Canvas gradebook export (its ``Points Possible`` row and rows without an id
    skipped); each row gets ``"student_id"``: its ``id_column``."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in ("Student", "ID", id_column) if c not in (reader.fieldnames or [])]
        if missing:
            raise LMSError(f"{path}: no column {', '.join(map(repr, missing))} (a Canvas gradebook export has "
                           f"{', '.join(ROSTER_COLUMNS)}, ...)")
        roster = {}
        for number, row in enumerate(reader, start=2):
            canvas_id = (row.get("ID") or "").strip()
            if not canvas_id or (row.get("Student") or "").strip() == "Points Possible":
                continue
            student = (row.get(id_column) or "").strip()
            if not student:
                raise LMSError(f"{path}, line {number}: {row.get('Student')!r} (Canvas id {canvas_id}) has no "
                               f"{id_column!r}")
            if "/" in student or student.startswith("."):
                raise LMSError(f"{path}, line {number}: {student!r} cannot be a student id (a directory name)")
            roster[canvas_id] = dict(row, student_id=student)
        return roster, list(reader.fieldnames)


def read_times(path):
    """``{Canvas user id: submission time (aware)}`` from a CSV with the columns ``ID`` and ``submitted_at``."""
    if not path:
        return {}
    times = {}
    with open(path, newline="", encoding="utf-8-sig") as handle:
        for number, row in enumerate(csv.DictReader(handle), start=2):
            text = (row.get("submitted_at") or "").strip()
            if not text:
                continue
            try:
                when = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                raise LMSError(f"{path}, line {number}: submitted_at {text!r} is not an ISO 8601 time") from None
            times[(row.get("ID") or "").strip()] = when if when.tzinfo else when.replace(tzinfo=datetime.timezone.utc)
    return times


def canvas_column(assignment, fieldnames, given=None):
    """The Canvas column of ``assignment``: ``given`` ("Title (id)"), else the roster's column whose title is the
    assignment's name (any case), else the bare name (Canvas then creates a new assignment)."""
    if given:
        return given
    for name in fieldnames:
        match = re.match(r"^(?P<title>.*?)\s*\((?P<id>\d+)\)$", name)
        if match and match["title"].strip().lower() == assignment.lower():
            return name
    return assignment


def export_canvas(course, path, assignments, roster, id_column=ID_COLUMN, columns=None):
    """Write ``path``: Canvas's gradebook import CSV for ``assignments`` (see the module's docstring). Returns the
    students recorded in the report that the roster does not have (not exported)."""
    from autograder.checks import max_points
    from autograder.course.grading import load_report, score_after_penalty

    people, fieldnames = read_roster(roster, id_column)
    titles = [canvas_column(a, fieldnames, (columns or {}).get(a)) for a in assignments]
    report = load_report(course)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(ROSTER_COLUMNS + titles)
        writer.writerow(["Points Possible", "", "", "", ""] + [f"{max_points(a):g}" for a in assignments])
        for canvas_id, row in people.items():
            scores = []
            for assignment in assignments:
                record = report.get(f"{row['student_id']}/{assignment}")
                scores.append("" if record is None else f"{score_after_penalty(record):g}")
            writer.writerow([row.get(c, "") if c != "ID" else canvas_id for c in ROSTER_COLUMNS] + scores)
    known = {row["student_id"] for row in people.values()}
    return sorted({r["student"] for r in report.values() if r["assignment"] in assignments} - known)


def roster_arguments(parser, roster_help):
    """``--roster CSV`` (Canvas's gradebook export) and ``--id-column``, for the commands that read a roster."""
    parser.add_argument("--roster", metavar="CSV", help=roster_help)
    parser.add_argument("--id-column", default=ID_COLUMN,
                        help=f"the roster's column that holds the student ids (default: {ID_COLUMN})")
