"""The gradebook as people read it: a student x assignment table, then each check's points."""

from .grading import expected_test_ids, points


def _cell(record):
    if record is None:
        return "-"
    score, maximum = points(record.get("grades") or {})
    if record["status"] == "missing":
        return "not submitted"
    if record["status"] == "error":
        return f"ERROR {score:g}/{maximum:g}"
    return f"{score:g}/{maximum:g}" + (" !" if record.get("problems") else "")


def _table(rows, header):
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join("{:<%d}" % w for w in widths)
    out = [line.format(*header), line.format(*("-" * w for w in widths))]
    out += [line.format(*map(str, r)) for r in rows]
    return "\n".join(out)


def gradebook_text(course, assignments, students, report):
    """The whole printed gradebook (also used by tests)."""
    parts = ["", "GRADEBOOK (points scored / points possible; '!' marks a submission with problems)", ""]
    rows = []
    for student in students:
        records = [report.get(f"{student}/{a}") for a in assignments]
        totals = [points((r or {}).get("grades", {})) for r in records]
        total, possible = sum(t for t, _ in totals), sum(p for _, p in totals)
        rows.append([student, *map(_cell, records), f"{total:g}/{possible:g}"])
    parts.append(_table(rows, ["student", *assignments, "total"]))
    problems = [f"  {key}: {p}" for key, record in sorted(report.items()) for p in record.get("problems", [])
                if key.split("/")[0] in students and key.split("/")[1] in assignments]
    if problems:
        parts += ["", "Problems found while grading:", *problems]
    for assignment in assignments:
        ids = expected_test_ids(course, assignment)
        rows = []
        for grade_id in ids:
            row = [grade_id]
            for student in students:
                grades = (report.get(f"{student}/{assignment}") or {}).get("grades", {})
                row.append("{:g}/{:g}".format(*grades[grade_id]) if grade_id in grades else "-")
            rows.append(row)
        parts += ["", f"{assignment}: points per check", _table(rows, ["check", *students])]
    return "\n".join(parts)


def print_gradebook(course, assignments, students, report):
    print(gradebook_text(course, assignments, students, report), flush=True)
