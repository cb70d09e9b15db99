"""The honest corpus (``corpus.py``): every answer full marks, nothing under review.

Quick: every entry, typed into the release notebook as a student would, breaks no source rule of any item and puts
no item under review (the source analysis alone, as the grader reads the cells). Slow (``e2e``): a sample graded by
the real ``nbgrader autograde`` with the sandbox, every item full.
"""

import pytest

from autograder.checks import items_of
from autograder.course.demo import _fill
from autograder.engine import notebooks
from autograder.submitted_source import Submission
from tests.honest.corpus import CORPUS, answers
from tests.proving import ROOT
from tests.source_findings import held_against

ENTRIES = [(topic, name) for topic, entries in CORPUS.items() for name in entries]


def reference(topic):
    return notebooks.solution_sources(notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb"))


def filled(topic, name):
    release = notebooks.read(ROOT / "release" / topic / f"{topic}.ipynb")
    return _fill(release, answers(topic, name, reference(topic)))


def source_verdicts(topic, name):
    """``{item: [what the source analysis holds against it]}``, only the items with something."""
    return held_against(topic, Submission.from_cells(notebooks.code_cells(filled(topic, name), topic)))


@pytest.mark.quick
def test_the_corpus_covers_every_assignment_and_the_issues_eight():
    assert len(ENTRIES) >= 60 and set(CORPUS) == {t for t, _ in ENTRIES} and len(CORPUS) == 10
    assert sum(name.startswith("issue_") for _, name in ENTRIES) == 8
    for topic, name in ENTRIES:
        assert set(CORPUS[topic][name]) <= set(reference(topic)), (topic, name)


@pytest.mark.quick
@pytest.mark.parametrize("topic", sorted(CORPUS))
def test_no_honest_answer_breaks_a_rule_or_goes_to_review(topic):
    found = {name: source_verdicts(topic, name) for name in CORPUS[topic]}
    assert {name: items for name, items in found.items() if items} == {}


SAMPLE = [(topic, name) for topic, name in ENTRIES if name.startswith("issue_")]   # the eight, three assignments


@pytest.fixture(scope="module")
def graded_sample(tmp_path_factory):
    from autograder.course.grade import grade_all
    from tests.adversarial.test_attacks import course_with_assignments

    topics = sorted({topic for topic, _ in SAMPLE})
    course = course_with_assignments(tmp_path_factory.mktemp("honest") / "course", topics)
    students = {}
    for topic, name in SAMPLE:
        student = name.removeprefix("issue_").replace("_", "-")
        path = course / "submitted" / student / topic / f"{topic}.ipynb"
        path.parent.mkdir(parents=True)
        notebooks.write(filled(topic, name), path)
        students.setdefault(topic, []).append(student)
    results = {}
    for topic in topics:
        for result in grade_all(course, [topic], students[topic], progress=None, seed=3535):
            results[(result.student, topic)] = result
    return results


@pytest.mark.e2e
@pytest.mark.timeout(1800)
def test_the_issues_eight_get_full_marks_from_the_real_grader(graded_sample):
    from tests.adversarial.test_attacks import expected_grades

    assert len(graded_sample) == 8
    for (student, topic), result in graded_sample.items():
        full = expected_grades(topic, {item.id: True for item in items_of(topic)})
        assert not result.under_review, (student, result.under_review)
        assert {k: list(v) for k, v in result.grades.items()} == full, (student, topic)
