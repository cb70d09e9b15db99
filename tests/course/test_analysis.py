"""The item analysis (``python -m autograder analysis``) on a synthetic class of 40 students graded in-process, with
one planted broken item: it must come first among the suspicious items."""

import functools

import torch

from autograder.commands.analysis import write_pages
from autograder.course.analysis import analyse, analyse_course
from autograder.engine.records import RecordStore, new_record
from autograder.engine.results import FAILED, GRADER_ERROR, PASSED, PENDING, UNDER_REVIEW, grade_item, grade_items
from autograder.errors import fail
from autograder.spec import Item
from tests.mutants.broadcasting import MUTANTS
from tests.proving import alternative, reference, stub, with_replacements

TOPIC = "broadcasting"


def check_pairwise_self_distance(pairwise_sq_distances):
    """A broken check, registered only here: it expects 1 on the diagonal, where every correct answer has 0."""
    x = torch.arange(6.0).reshape(3, 2)
    got = pairwise_sq_distances(x, x).diagonal()
    if not torch.equal(got, torch.ones(3)):
        fail("check_pairwise_self_distance", f"the distance of each row to itself should be 1, got {got.tolist()}.")


BROKEN = Item(TOPIC, "pairwise_self_distance", check_pairwise_self_distance, 2.0)


def _graded(namespace):
    torch.manual_seed(0)
    results = grade_items(TOPIC, namespace, seed=7, hidden=False)
    return [r.as_dict() for r in results + [grade_item(BROKEN, namespace, seed=7, hidden=False)]]


@functools.cache
def synthetic_class():
    """``{student: item results}``: 8 reference, 4 second-solution, 4 untouched and 24 mutant students (12 mutants,
    two students each): a disguised copy grades as its original, so each distinct code is graded once (and once per
    test session: the browser test's picture reads the same)."""
    mutants = list(MUTANTS.items())[::2]
    distinct = {"reference": reference(TOPIC), "alternative": alternative(TOPIC), "stub": stub(TOPIC),
                **{name: with_replacements(TOPIC, replacements) for name, (replacements, _) in mutants}}
    graded = {name: _graded(namespace) for name, namespace in distinct.items()}
    students = {f"ref{n}": graded["reference"] for n in range(8)}
    students.update({f"alt{n}": graded["alternative"] for n in range(4)})
    students.update({f"stub{n}": graded["stub"] for n in range(4)})
    for k, (name, _) in enumerate(mutants):
        students.update({f"mut{k}-{n}": graded[name] for n in range(2)})
    return students


def test_planted_broken_item_tops_the_suspicious_list(tmp_path):
    store = RecordStore(tmp_path)
    students = synthetic_class()
    assert len(students) == 40
    for student, items in students.items():
        store.append(new_record(student, TOPIC, items=items, seed=7, graded_by="in-process grade_items (test)"))
    [stats] = analyse_course(tmp_path, [TOPIC])
    assert len(stats.totals) == 40
    suspicious = stats.suspicious()
    first, why, _ = suspicious[0]
    assert (first.item, why) == ("pairwise_self_distance", "broken?")
    assert first.pass_rate == 0.0 and first.strong_failed == first.strong >= 30
    [(message, count)] = first.messages.items()           # one property, one message, numbers masked
    assert count == first.counts[FAILED] == 36 and "should be #" in message[1]   # the 4 stubs raise: not judged
    assert all(item.broken_share < 1.0 for item, why, _ in suspicious[1:] if why == "broken?")
    course_page = write_pages(tmp_path, [TOPIC], progress=None)
    page = (tmp_path / "after-grading" / f"analysis-{TOPIC}.html").read_text(encoding="utf-8")
    assert page.index("pairwise_self_distance") < page.index("Points")      # at the top of the suspicious list
    assert "<script" not in page and (tmp_path / "after-grading" / "plots" / f"{TOPIC}-points.png").stat().st_size
    assert "pairwise_self_distance" in course_page.read_text(encoding="utf-8")


def _item(item, status, score, message=""):
    return {"item": item, "check": f"check_{item}", "status": status, "score": score, "max_score": 1.0,
            "message": message}


def test_statuses_other_than_passed_and_failed_are_counted_apart():
    records = [new_record("s1", "t", items=[_item("a", PASSED, 1.0), _item("b", UNDER_REVIEW, 0.0)]),
               new_record("s2", "t", items=[_item("a", FAILED, 0.0, "[check_a] got 3, expected 4\nHint: x"),
                                            _item("b", PENDING, 0.0)]),
               new_record("s3", "t", items=[_item("a", FAILED, 0.0, "[check_a] got 5, expected 4"),
                                            _item("b", GRADER_ERROR, 0.0)]),
               new_record("s4", "t", status="missing")]
    stats = analyse("t", records)
    a, b = stats.items
    assert a.pass_rate == 1 / 3 and dict(a.messages) == {("check_a", "got #, expected #"): 2}
    assert b.pass_rate is None and b.judged == 0
    assert (b.counts[UNDER_REVIEW], b.counts[PENDING], b.counts[GRADER_ERROR], b.counts[FAILED]) == (1, 1, 1, 0)
    assert stats.statuses["missing"] == 1 and len(stats.totals) == 3
