"""Real nbgrader on temporary courses: the demo's sample students, hostile submissions, exports.

These run the real ``nbgrader generate_assignment`` / ``autograde`` / ``export`` with real
Jupyter kernels and nbgrader's SQLite gradebook.
"""

import csv
import json

import pytest

from autograder.course import notebooks
from autograder.course.build import generate_assignments, nbgrader, scratch_course, topics
from autograder.course.demo import STUDENTS, _fill, run_demo
from autograder.course.export import export_csv, export_gradescope
from autograder.course.grading import grade_all, load_report, points, read_grades
from autograder.course.report import gradebook_text
from autograder.settings import override
from tests.proving import ROOT

pytestmark = pytest.mark.e2e
TOPICS = topics(ROOT)


@pytest.fixture(scope="module")
def demo_course(tmp_path_factory):
    work = tmp_path_factory.mktemp("demo")
    run_demo(ROOT, keep=work, progress=lambda *a, **k: None)
    return work


def _scores(record):
    return points(record["grades"])


@pytest.mark.parametrize("topic", TOPICS)
def test_demo_reference_full_stub_zero_buggy_loses(demo_course, topic):
    report = load_report(demo_course)
    score, possible = _scores(report[f"reference/{topic}"])
    assert possible > 0 and score == possible, report[f"reference/{topic}"]
    assert _scores(report[f"untouched/{topic}"]) == (0, possible)
    buggy, _ = _scores(report[f"buggy/{topic}"])
    assert buggy < possible
    for student in ("reference", "untouched", "buggy"):
        assert report[f"{student}/{topic}"]["problems"] == []


def test_demo_reports_broken_notebooks_by_name_and_keeps_every_record(demo_course):
    report = load_report(demo_course)
    first, second = TOPICS[0], TOPICS[1] if len(TOPICS) > 1 else None
    broken = report[f"mangled/{first}"]
    assert broken["status"] == "error"
    assert f"{first}.ipynb cannot be read: not valid notebook JSON" in broken["problems"][0]
    if second:
        deleted = report[f"mangled/{second}"]
        assert deleted["status"] == "graded"
        assert "graded cells deleted" in deleted["problems"][0]
        assert 0 < _scores(deleted)[0] < _scores(deleted)[1]
    text = gradebook_text(demo_course, TOPICS, list(STUDENTS), report)
    assert "ERROR" in text and "not valid notebook JSON" in text
    for student in STUDENTS:
        assert student in text
    # nbgrader's own gradebook holds a record for every submission, the unreadable one included
    for student in ("reference", "untouched", "buggy"):
        for topic in TOPICS:
            assert read_grades(demo_course, student, topic)
    assert read_grades(demo_course, "mangled", first)


def test_exports(demo_course, tmp_path):
    path = export_csv(demo_course, tmp_path / "grades.csv", TOPICS)
    rows = list(csv.DictReader(open(path, encoding="utf-8")))
    assert len(rows) == 3 * len(TOPICS) + min(2, len(TOPICS))
    reference = [r for r in rows if r["student"] == "reference"]
    assert all(r["score"] == r["max_score"] for r in reference)
    written = export_gradescope(demo_course, tmp_path / "gs", TOPICS)
    untouched = json.loads((tmp_path / "gs" / "untouched" / TOPICS[0] / "results.json").read_text())
    assert len(written) == len(rows)
    assert untouched["score"] == 0 and untouched["tests"]
    assert all(t["status"] == "failed" and "not implemented yet" in t["output"] for t in untouched["tests"])
    # nbgrader's own exporter reads the same gradebook
    nbgrader(demo_course, "export", "--to", str(tmp_path / "nbgrader.csv"))
    assert len(list(csv.DictReader(open(tmp_path / "nbgrader.csv", encoding="utf-8")))) >= 3 * len(TOPICS)


HOSTILE = {
    "hang": "import torch\nwhile True:\n    pass\n",
    "crash": "import os\nos._exit(3)\n",
    "hog": "import torch\nhuge = torch.empty(1 << 36, dtype=torch.uint8)\n",
    "flood": None,   # the reference, then 200,000 lines of output
}


def test_hostile_submissions_cost_only_their_checks(tmp_path):
    work = scratch_course(ROOT, tmp_path / "course")
    list(generate_assignments(work, ["stability"]))
    release = notebooks.read(work / "release" / "stability" / "stability.ipynb")
    reference = notebooks.solution_sources(notebooks.read(work / "source" / "stability" / "stability.ipynb"))
    for student, cell in HOSTILE.items():
        cell = cell or reference["stable_softmax"] + "\nfor i in range(200000):\n    print('spam' * 20)\n"
        target = work / "submitted" / student / "stability"
        target.mkdir(parents=True)
        notebooks.write(_fill(release, {**reference, "stable_softmax": cell}), target / "stability.ipynb")
    with override({"grading": {"cell_timeout_s": 10, "memory_limit_gb": 4}}):
        results = {r.student: r for r in grade_all(work, ["stability"], list(HOSTILE), progress=None)}
    softmax = {g for g in results["hang"].grades if "softmax" in g and "cross_entropy" not in g}
    for student in ("hang", "crash", "hog"):
        grades = results[student].grades
        assert all(grades[g][0] == 0 for g in softmax), (student, grades)
        assert all(s == m > 0 for g, (s, m) in grades.items() if g not in softmax), (student, grades)
    assert any("ran longer than 10 s" in p for p in results["hang"].problems)
    assert any("kernel died in cell" in p for p in results["crash"].problems)
    assert results["flood"].score == results["flood"].max_score
    graded = (work / "autograded" / "flood" / "stability" / "stability.ipynb").stat().st_size
    assert graded < 200_000   # LimitOutput kept the graded notebook small
