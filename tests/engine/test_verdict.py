"""One verdict type (autograder/engine/verdict.py): the record keeps it and gives it back, each reader gets its own
shape from it, and a failure's kind is where it was raised, not its message's words."""

import json

import pytest

from autograder.engine.records import RecordStore, new_record, verdicts
from autograder.engine.verdict import (CSV_COLUMNS, FAILED, GRADER_ERROR, PASSED, PENDING, UNDER_REVIEW, Verdict,
                                       by_status)
from autograder.errors import CheckFailure, fail, named_kind

pytestmark = pytest.mark.quick


def failed(**fields):
    return Verdict("softmax_forward", "check_softmax_forward", fields.pop("status", FAILED), fields.pop("score", 0.0),
                   2.0, **{"message": "[check_softmax_forward] the rows do not sum to 1.\nHint: Divide by the sum.",
                           "kind": "failed at checks.stability.check_softmax_forward:2", **fields})


def test_a_verdict_goes_through_the_record_unchanged(tmp_path):
    verdict = failed(measurements={"ratio": 1.5}, evidence={"variants": 3, "seed": 7}, note="its test cell was "
                     "edited", cause="your code raised ValueError: no")
    store = RecordStore(tmp_path)
    store.append(new_record("ada", "stability", items=[verdict, failed(status=PASSED, score=2.0, message="",
                                                                      kind="")]))
    on_disk = json.loads(store.path("ada", "stability").read_text(encoding="utf-8"))["history"][-1]["items"][0]
    assert on_disk["kind"] == verdict.kind and on_disk["score"] == 0.0 and on_disk["max_score"] == 2.0
    back = verdicts(store.latest("ada", "stability"))
    assert back[0] == verdict and back[1].passed


def test_a_record_written_before_a_field_existed_reads_with_its_default():
    old = {"item": "softmax_forward", "check": "check_softmax_forward", "status": PASSED, "score": 2.0,
           "max_score": 2.0, "message": "", "a field of a later version": 1}
    verdict = Verdict.from_dict(old)
    assert verdict.kind == "" and verdict.cause == "" and verdict.passed


def test_each_reader_gets_its_shape():
    verdict = failed()
    assert verdict.to_gradebook() == {"name": "test_softmax_forward", "auto_score": 0.0, "needs_manual_grade": False}
    assert failed(status=UNDER_REVIEW).to_gradebook()["needs_manual_grade"]
    assert failed(status=GRADER_ERROR).to_gradebook()["needs_manual_grade"]
    feedback = verdict.to_feedback()
    assert feedback == {"output_type": "error", "ename": "CheckFailure", "evalue": verdict.message,
                        "traceback": [f"CheckFailure: {verdict.message}"]}
    assert failed(status=PENDING).to_feedback()["ename"] == "PendingGPU"
    assert failed(status=PASSED, score=2.0).to_feedback() == {"output_type": "stream", "name": "stdout",
                                                               "text": "check_softmax_forward: passed\n"}
    review = failed(status=UNDER_REVIEW, message="[check_softmax_forward] under review: ...").to_feedback()
    assert review["output_type"] == "stream" and "Traceback" not in review["text"]
    assert verdict.to_gradescope() == {"name": "softmax_forward", "score": 0.0, "max_score": 2.0, "status": "failed",
                                       "output": verdict.message}
    assert failed(status=PENDING, message="").to_gradescope()["tags"] == ["pending: needs a GPU"]
    assert failed(status=UNDER_REVIEW).to_gradescope()["tags"] == ["under review: the instructor decides"]
    assert Verdict("a", "check_a", FAILED, 0.0, 1.0).to_gradescope(missing=True)["output"] == "not submitted"
    row = verdict.to_csv_row()
    assert len(row) == len(CSV_COLUMNS) and row[:6] == ["softmax_forward", "check_softmax_forward", FAILED, "0", "2",
                                                        verdict.kind]
    assert failed(status=PENDING).csv_cell() == "pending" and failed(score=1.5).csv_cell() == "1.5"


def test_what_a_submission_says_by_status():
    found = by_status([failed(), failed(status=PENDING, message=""), Verdict("b", "check_b", PASSED, 1.0, 1.0),
                       Verdict("c", "check_c", UNDER_REVIEW, 0.0, 1.0, "[check_c] under review")])
    assert found == {"pending": ["softmax_forward"], "grader_errors": [], "under_review": ["c"],
                     "messages": {"softmax_forward": failed().message, "c": "[check_c] under review"}}


def check_rows(x, words):
    if x < 0:
        raise CheckFailure("check_rows", f"the rows {words} for x = {x}.")
    if x == 0:
        fail("check_rows", "zero "
                           f"is {words}: it spans two lines")
    raise CheckFailure("check_rows", f"{words}.", kind="wrong value")


def kind_of(x, words):
    with pytest.raises(CheckFailure) as excinfo:
        check_rows(x, words)
    return excinfo.value.kind


def test_a_reworded_message_keeps_its_kind():
    assert kind_of(-1, "do not sum to 1") == kind_of(-7, "are off: rewritten") == \
        "failed at tests.engine.test_verdict.check_rows:1"
    assert kind_of(0, "one thing") == kind_of(0, "another") == "failed at tests.engine.test_verdict.check_rows:2"
    assert kind_of(1, "named") == "wrong value"      # a kind the check names is its own


def fail_with_words(words):
    """A helper that only words a failure for its caller: the kind is its caller's raise site."""
    __kind_at_caller__ = True     # noqa: F841 - read by autograder.errors.raise_site
    raise CheckFailure("check_rows", f"it {words}.")


def check_columns(x):
    if x < 0:
        fail_with_words("is negative")
    if x == 0:
        fail_with_words("is zero")


def test_a_helper_that_words_a_failure_gives_its_callers_site():
    kinds = []
    for x in (-1, 0):
        with pytest.raises(CheckFailure) as excinfo:
            check_columns(x)
        kinds.append(excinfo.value.kind)
    assert kinds == ["failed at tests.engine.test_verdict.check_columns:1",
                     "failed at tests.engine.test_verdict.check_columns:2"]


def test_a_named_kind_reads_the_same_on_every_input():
    assert named_kind("block 2 of 4 recomputed") == named_kind("block 3 of 5 recomputed") == \
        "failed: block # of # recomputed"
