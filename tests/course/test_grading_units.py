"""The grading tools' plain-data parts, without running nbgrader."""

import pytest

from autograder.course.grading import nbgrader_cause, zero_grades
from autograder.engine.records import RecordError, RecordStore, new_record

NBGRADER_LOG = """[AutogradeApp | INFO] Copying /c/submitted/bob/stability/timestamp.txt -> /c/autograded/bob/stability
[AutogradeApp | ERROR] No assignment with ID 'stability' exists in the database
[AutogradeApp | ERROR] There was an error processing files for assignment: stability
[AutogradeApp | ERROR] Please see the the above traceback for details on the specific errors on the above failures.
"""


@pytest.mark.quick
def test_nbgrader_failure_gives_nbgraders_own_cause():
    assert nbgrader_cause(NBGRADER_LOG) == "No assignment with ID 'stability' exists in the database"
    assert nbgrader_cause("Traceback (most recent call last):\n  File x\nValueError: bad thing\n") == \
        "ValueError: bad thing"
    assert nbgrader_cause("") == "(no output)"


@pytest.mark.quick
def test_missing_and_failed_submissions_score_zero_out_of_the_full_points():
    from autograder.checks import items_of, max_points
    grades = zero_grades("stability")
    assert list(grades) == [item.id for item in items_of("stability")]
    assert sum(m for _, m in grades.values()) == max_points("stability") and not any(s for s, _ in grades.values())


@pytest.mark.quick
def test_records_keep_their_history_and_say_what_changed(tmp_path):
    store = RecordStore(tmp_path)
    first = new_record("ann", "stability", seed=9, items=[
        {"item": "softmax_forward", "score": 3.0, "max_score": 3.0, "status": "passed"},
        {"item": "softmax_extremes", "score": 0.0, "max_score": 3.0, "status": "grader error"}])
    assert store.append(first)["changes"] == []
    second = new_record("ann", "stability", seed=10, items=[
        {"item": "softmax_forward", "score": 3.0, "max_score": 3.0, "status": "passed"},
        {"item": "softmax_extremes", "score": 3.0, "max_score": 3.0, "status": "passed"}])
    store.append(second)
    assert second["changes"] == [{"item": "softmax_extremes", "old": 0.0, "new": 3.0, "old_status": "grader error",
                                  "new_status": "passed"}]
    assert [r["seed"] for r in store.history("ann", "stability")] == [9, 10]
    assert store.latest("ann", "stability")["seed"] == 10 and list(store.all_latest()) == ["ann/stability"]
    assert sorted(p.name for p in (tmp_path / "grading-records" / "ann").iterdir()) == ["stability.json"]
    (tmp_path / "grading-records" / "ann" / "stability.json").write_text("{not json")
    with pytest.raises(RecordError, match="stability.json cannot be read"):
        store.append(new_record("ann", "stability"))
    assert (tmp_path / "grading-records" / "ann" / "stability.json").read_text() == "{not json"   # left as it was


@pytest.mark.quick
def test_a_check_that_raises_is_a_grader_error_and_a_student_exception_is_a_failure():
    from autograder.commands.check import report_text
    from autograder.engine.results import GRADER_ERROR_MESSAGE, grade_item
    from autograder.spec import Item

    def buggy_check(fn, **kwargs):
        raise KeyError("a bug in the check")

    def check_calling(fn, **kwargs):
        fn()

    def student():
        error = ValueError("my bug")
        error.remote_traceback = "Traceback ... ValueError: my bug"   # as rebuilt from the worker
        raise error

    bug = grade_item(Item("stability", "x", buggy_check, points=2.0), {"fn": student}, seed=1)
    assert (bug.status, bug.score, bug.message) == ("grader error", 0.0, GRADER_ERROR_MESSAGE)
    assert "KeyError: 'a bug in the check'" in bug.detail and "KeyError" not in bug.message
    mine = grade_item(Item("stability", "y", check_calling, points=1.0), {"fn": student}, seed=1)
    assert (mine.status, mine.score, mine.detail) == ("failed", 0.0, "")
    assert mine.message.endswith("your code raised ValueError: my bug")
    text = report_text("stability", [bug, mine], 1)
    assert "  GRADER ERROR  0/2  x" in text and text.endswith("0/3 points (0 passed, 1 failed, 0 pending, 1 not graded: "
                                                              "the grader failed on them)")


@pytest.mark.quick
def test_settings_command_lists_settings_items_and_declared_tolerances():
    import json

    from autograder.commands.settings import settings_text
    data = json.loads(settings_text(["stability", "amp"]))
    assert data["settings"]["grading"]["gpu_items"] == "pending" and data["comparison_tolerances"]["float32"]
    stability = data["topics"]["stability"]
    assert stability["items"][0] == {"id": "softmax_forward", "points": 3.0, "visible": {},
                                     "hidden": [{"cases": 80}], "needs": None}
    assert stability["constants"]["CE_TOLERANCES"]["bfloat16"] == [0.03, 0.016]
    assert any(i["needs"] == "cuda" for i in data["topics"]["amp"]["items"])




@pytest.mark.quick
def test_a_notebook_whose_cells_are_not_cells_is_named_not_read(tmp_path):
    """JSON with a list of cells, but a number among them, or a cell with list metadata: a NotebookError that says
    which cell, where the grader would otherwise stop on it."""
    import json

    from autograder.engine import notebooks

    for cells, says in [([{"cell_type": "code", "source": "x"}, 42], "cell 1 is 42, not a cell"),
                        ([{"cell_type": "code", "metadata": ["nbgrader"], "source": ""}], "cell 0's metadata"),
                        ([{"cell_type": "code", "metadata": {"nbgrader": 7}, "source": ""}], "cell 0's metadata"),
                        ([{"cell_type": "code", "source": ["x", 3]}], "cell 0's source is not text")]:
        path = tmp_path / "nb.ipynb"
        path.write_text(json.dumps({"cells": cells}))
        with pytest.raises(notebooks.NotebookError, match=says.replace("'", ".")):
            notebooks.read(path)


@pytest.mark.quick
def test_a_measurement_a_check_doubts_is_a_review_an_instructor_can_decide():
    """A check's ``UnderReview`` (a speedup past the device's ceiling, too little traffic for the exchange) is that
    variant's last word: the other variants still run, and the item goes to review with the measurement as its
    construct, so that ``review --accept`` passes it; a variant that fails makes it fail, review or not."""
    from autograder.engine.records import ACCEPTED, apply_decisions, review_key
    from autograder.engine.results import grade_item
    from autograder.errors import CheckFailure, UnderReview
    from autograder.spec import Item

    def doubting(fn, *, seed=0, fail=False):
        if fail:
            raise CheckFailure("check_d", "wrong")
        if seed == 0:
            raise UnderReview("check_d", "ran 90000x as fast as the baseline\nCase: x", measurements={"ratio": 9e4})

    doubted = grade_item(Item("stability", "d", doubting, points=2.0, hidden=({},)), {"fn": print}, seed=1)
    assert (doubted.status, doubted.score, doubted.measurements) == ("under review", 0.0, {"ratio": 9e4})
    assert doubted.message.startswith("[check_d] ran 90000x as fast")
    review = doubted.evidence["review"]
    construct, = review["constructs"]
    assert construct.pop("code") and construct == {"construct": "ran 90000x as fast as the baseline",
                                                   "part": "the grader's measurement", "line": None, "snippet": ""}
    assert review["on_accept"] == {"status": "passed", "score": 2.0, "message": ""}
    record = {"items": [doubted.as_dict()]}
    decision = {"item": "d", "decision": ACCEPTED, "constructs": review_key(record["items"][0]), "by": "me"}
    assert apply_decisions(record, [decision]) == ["d"]
    assert (record["items"][0]["status"], record["items"][0]["score"]) == ("passed", 2.0)
    failed = grade_item(Item("stability", "d", doubting, points=2.0, hidden=({"fail": True},)), {"fn": print}, seed=1)
    assert (failed.status, failed.score) == ("failed", 0.0) and "review" not in failed.evidence
