"""Gradescope's ``results.json`` from one trusted grading (``jobs.grade_job_here``'s data), the late policy and the
bundle's choices.

The tests and the total are :func:`gradescope_results` of a report record built here, so a bundle and
``python -m autograder export --gradescope`` write the same thing for the same verdicts; this adds what only a bundle
decides: each test's ``visibility`` (the instructor's feedback policy), GPU items waived (max 0, out of the total) or
failed, the lateness from Gradescope's ``submission_metadata.json``, and ``extra_data`` (seed, sandbox, seconds) for
the instructor. Gradescope's format: https://gradescope-autograders.readthedocs.io/en/latest/specs/
"""

import datetime

from autograder.checks import items_of
from autograder.course.current_grades import verdicts_in_force
from autograder.course.late_policy import duration_text, lateness
from autograder.engine.verdict import GRADER_ERROR, Verdict, by_status

FEEDBACK = ("immediate", "after_due_date")   # per test: Gradescope's "visible" or "after_due_date"
GPU_POLICIES = ("waive", "fail")             # no GPU in Gradescope: pending is not possible
WAIVED = "waived: this item needs a GPU, and Gradescope has none; it is not part of this assignment's total here"


def record_from_grade(data, assignment):
    """The report record ``gradescope_results`` reads, from ``grade_job_here``'s data: its verdicts, as the grades
    in force give them (``current_grades.entry_of``, without a gradebook)."""
    verdicts = [Verdict.from_dict(i) for i in data.get("items", [])]
    return {"status": "graded", "items": [v.to_dict() for v in verdicts],
            "grades": {v.item: [v.score, v.max_score] for v in verdicts}, **by_status(verdicts),
            "problems": list(data.get("problems", []))}


def gpu_items(assignment):
    return {item.id for item in items_of(assignment) if item.needs}


def visibility(feedback, item=None):
    """Gradescope's ``visibility`` for ``item`` (the whole result for None). ``feedback``: a policy of
    :data:`FEEDBACK`, or ``{"default": policy, "items": {item: policy}}`` where the instructor chose per item."""
    if isinstance(feedback, dict):
        feedback = feedback.get("items", {}).get(item, feedback.get("default", "immediate"))
    return "visible" if feedback == "immediate" else "after_due_date"


def results_json(data, assignment, *, feedback, gpu_policy, late=None, sandbox="", seed=None):
    """``results.json`` as a dict. ``late``: :func:`late_from_metadata`'s dict, or None."""
    record = record_from_grade(data, assignment)
    late = late or {}
    earned = sum(score for score, _ in record["grades"].values())
    if late.get("seconds_late", 0) > 0:
        cost = lateness(earned, late["seconds_late"])
        record.update(late_penalty=cost.points, seconds_late=cost.seconds_late, late_note=late_note(cost, late))
    result = gradescope_results(record, assignment)
    waived = gpu_items(assignment) if gpu_policy == "waive" else set()
    for test in result["tests"]:
        test["visibility"] = visibility(feedback, test["name"])
        if test["name"] in waived:
            test.update(score=0.0, max_score=0.0, output=WAIVED, status="passed")
            test.pop("tags", None)
    result["score"] = round(sum(t["score"] for t in result["tests"]) - (record.get("late_penalty") or 0.0), 6)
    result["visibility"] = visibility(feedback)
    result["stdout_visibility"] = "hidden"
    notes = [result["output"]] if result.get("output") else []
    if record["grader_errors"]:
        notes.append(f"Grader error on {', '.join(record['grader_errors'])}: a problem in the grading code, not in "
                     "your work; these items score 0 until your instructor regrades them.")
    notes.append(f"Graded in {sandbox}." if sandbox else "")
    result["output"] = "\n".join(n for n in notes if n)
    result["execution_time"] = round(float(data.get("seconds", 0.0)), 1)
    result["extra_data"] = {"seed": seed, "sandbox": sandbox, "seconds": data.get("seconds"),
                            "peak_rss_mb": data.get("peak_rss_mb"), "gpu_items": gpu_policy,
                            "grader_errors": record["grader_errors"], "under_review": record["under_review"],
                            "late": late}
    return result


def late_note(cost, late):
    due = late.get("due", "")
    return f"{cost.describe()} (due {due}{' with your extension' if late.get('extended') else ''})"


def parse_time(text):
    """Gradescope's times ("2026-11-24T20:15:00.123456-08:00"), aware; None for none."""
    if not text:
        return None
    when = datetime.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=datetime.timezone.utc)


def late_from_metadata(metadata):
    """``{"submitted_at", "due", "extended", "seconds_late"}`` from ``submission_metadata.json``: the submission's
    ``created_at`` against the latest of the assignment's ``due_date`` and each submitter's own
    (``users[].assignment.due_date``: an extension). None without a due date or a submission time."""
    submitted = parse_time(metadata.get("created_at"))
    own = (metadata.get("assignment") or {}).get("due_date")
    extended = [parse_time((user.get("assignment") or {}).get("due_date")) for user in metadata.get("users") or []]
    extended = [when for when in extended if when is not None]
    due = max([parse_time(own), *extended], default=None, key=lambda w: w or datetime.datetime.min.replace(
        tzinfo=datetime.timezone.utc))
    if submitted is None or due is None:
        return None
    return {"submitted_at": submitted.isoformat(), "due": due.isoformat(),
            "extended": bool(extended) and due != parse_time(own),
            "seconds_late": max(0.0, (submitted - due).total_seconds()),
            "late_by": duration_text(max(0.0, (submitted - due).total_seconds()))}


def zero_results(assignment, message, *, feedback, gpu_policy, grader_error=False):
    """Every item 0 with ``message`` (a missing or unreadable notebook), or a grader error that stopped grading."""
    items = [{"item": item.id, "check": item.name, "score": 0.0, "max_score": item.points,
              "status": GRADER_ERROR if grader_error else
              "failed", "message": message} for item in items_of(assignment)]
    result = results_json({"items": items, "problems": [message]}, assignment, feedback=feedback,
                          gpu_policy=gpu_policy)
    result["extra_data"]["not_graded"] = message
    return result


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
