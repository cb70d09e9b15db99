"""Real nbgrader on temporary courses: the demo's sample students, hostile submissions, exports.

These run the real ``nbgrader generate_assignment`` / ``autograde`` / ``export`` with real
Jupyter kernels and nbgrader's SQLite gradebook.
"""

import csv
import importlib
import json
import re

import pytest

from autograder.checks import items_of, max_points
from autograder.commands.build import generate_assignments, nbgrader, scratch_course, topics
from autograder.commands.check import load_namespace
from autograder.commands.demo import STUDENTS, _fill, run_demo
from autograder.commands.export import export_csv, export_gradescope
from autograder.commands.grade import grade_all
from autograder.commands.pending import gradebook_text, pending_text
from autograder.course.grading import load_report, points, read_grades
from autograder.engine import notebooks
from autograder.engine.results import grade_items
from autograder.settings import override
from tests.proving import ROOT, without_hidden_variants

pytestmark = pytest.mark.e2e
TOPICS = topics(ROOT)


SEED = 20261122   # the demo's hidden-test seed, so that `check` can reproduce nbgrader's run


@pytest.fixture(scope="module")
def demo_course(tmp_path_factory):
    work = tmp_path_factory.mktemp("demo")
    run_demo(ROOT, keep=work, progress=lambda *a, **k: None, seed=SEED)
    return work


def _scores(record):
    return points(record["grades"])


@pytest.mark.parametrize("topic", TOPICS)
def test_demo_reference_full_stub_zero_buggy_loses(demo_course, topic):
    report = load_report(demo_course)
    reference = report[f"reference/{topic}"]
    score, possible = _scores(reference)
    gpu = {item.id for item in items_of(topic) if item.needs}
    assert possible == max_points(topic) and reference["pending"] == sorted(gpu), reference
    assert score == possible - sum(item.points for item in items_of(topic) if item.needs)
    assert _scores(report[f"untouched/{topic}"]) == (0, possible)
    assert report[f"untouched/{topic}"]["pending"] == []   # a stub is not pending: it fails on the CPU already
    buggy = report[f"buggy/{topic}"]
    lost = sorted(item for item, (score, most) in buggy["grades"].items() if score < most and item not in gpu)
    assert lost == sorted(importlib.import_module(f"autograder.commands.demo_submissions.{topic}").LOSES)
    for student in ("reference", "untouched", "buggy"):
        assert report[f"{student}/{topic}"]["problems"] == []
        assert report[f"{student}/{topic}"]["seed"] == SEED


def test_demo_reports_broken_notebooks_by_name_and_keeps_every_record(demo_course):
    report = load_report(demo_course)
    first, second = TOPICS[0], TOPICS[1]
    broken = report[f"mangled/{first}"]
    assert broken["status"] == "error" and _scores(broken) == (0, max_points(first))
    assert f"{first}.ipynb cannot be read: not valid notebook JSON" in broken["problems"][0]
    deleted = report[f"mangled/{second}"]     # the reference with its first test cell deleted: graded from the spec
    first_test = items_of(second)[0]
    assert deleted["status"] == "graded" and deleted["problems"] == [
        f"{second}.ipynb: test cells deleted (graded from the spec all the same): {first_test.cell_id}"]
    assert deleted["notes"] == {first_test.id: f"its test cell {first_test.cell_id} was deleted from the submission: "
                                               "graded from the spec"}
    assert _scores(deleted) == _scores(report[f"reference/{second}"])
    for topic in TOPICS[2:]:   # submitted nothing: 0 out of the assignment's full points
        assert report[f"mangled/{topic}"]["status"] == "missing"
        assert _scores(report[f"mangled/{topic}"]) == (0, max_points(topic))
    text = gradebook_text(TOPICS, list(STUDENTS), report)
    course_max = sum(max_points(t) for t in TOPICS)
    assert "ERROR" in text and "not valid notebook JSON" in text and "missing 0/" in text
    for student in STUDENTS:
        assert re.search(rf"^{student} .* \d+/{course_max:g}\s*$", text, flags=re.M), student
    assert "Pending: items that need a GPU" in text and "reference/amp: speed" in text
    # nbgrader's own gradebook holds a record for every submission, the unreadable one included
    for student in ("reference", "untouched", "buggy"):
        for topic in TOPICS:
            assert read_grades(demo_course, student, topic)
    assert read_grades(demo_course, "mangled", first)


def test_demo_writes_the_similarity_and_analysis_pages(demo_course):
    pages = demo_course / "after-grading"
    for topic in TOPICS:
        assert (pages / f"similarity-{topic}.html").is_file() and (pages / f"analysis-{topic}.html").is_file()
    data = json.loads((pages / "similarity-stability.json").read_text(encoding="utf-8"))
    flagged = {(p["a"], p["b"]) for p in data["pairs"] if p["score"] >= data["threshold"]}
    assert ("reference", "reference solution") in flagged and ("buggy", "untouched") not in flagged
    assert "analysis-stability.html" in (pages / "analysis.html").read_text(encoding="utf-8")


def test_exports_one_table_per_assignment_with_pending_items(demo_course, tmp_path):
    paths = export_csv(demo_course, tmp_path / "grades.csv", TOPICS)
    assert [p.name for p in paths] == [f"grades-{t}.csv" for t in TOPICS]
    for topic, path in zip(TOPICS, paths):
        rows = {r["student"]: r for r in csv.DictReader(open(path, encoding="utf-8"))}
        assert set(rows) == set(STUDENTS)
        assert all(r["max_score"] == f"{max_points(topic):g}" for r in rows.values())
        assert set(rows["reference"]) >= {item.id for item in items_of(topic)}
    amp = {r["student"]: r for r in csv.DictReader(open(tmp_path / "grades-amp.csv", encoding="utf-8"))}
    assert amp["reference"]["speed"] == "pending" and amp["reference"]["pending"] == "speed"
    assert amp["mangled"]["status"] == "missing" and amp["mangled"]["score"] == "0"
    (wide,) = export_csv(demo_course, tmp_path / "wide.csv", TOPICS, wide=True)
    rows = {r["student"]: r for r in csv.DictReader(open(wide, encoding="utf-8"))}
    assert rows["mangled"]["max_score"] == f"{sum(max_points(t) for t in TOPICS):g}" and "amp:speed" in \
        rows["reference"]["pending"]
    written = export_gradescope(demo_course, tmp_path / "gs", TOPICS)
    assert len(written) == len(STUDENTS) * len(TOPICS)
    untouched = json.loads((tmp_path / "gs" / "untouched" / TOPICS[0] / "results.json").read_text())
    assert untouched["score"] == 0 and untouched["tests"]
    assert all(t["status"] == "failed" and "not implemented yet" in t["output"] for t in untouched["tests"])
    reference = json.loads((tmp_path / "gs" / "reference" / "amp" / "results.json").read_text())
    speed = next(t for t in reference["tests"] if t["name"] == "speed")
    assert speed["score"] == 0 and "pending: needs a GPU" in speed["output"] and "pending" in reference["output"]
    assert "reference/amp: speed" in pending_text(demo_course)
    # nbgrader's own exporter reads the same gradebook
    nbgrader(demo_course, "export", "--to", str(tmp_path / "nbgrader.csv"))
    assert len(list(csv.DictReader(open(tmp_path / "nbgrader.csv", encoding="utf-8")))) >= 3 * len(TOPICS)


@pytest.mark.parametrize("topic", TOPICS)
def test_check_and_nbgrader_agree_on_the_buggy_and_mangled_demo_students(demo_course, topic, monkeypatch):
    """`check` on the very notebooks nbgrader graded, with the run's seed, gives nbgrader's points item by item
    (the reference and the stub agree by the proofs: full marks and zero both ways)."""
    monkeypatch.setenv("AUTOGRADER_GRADING", "1")
    report = load_report(demo_course)
    for student in ("buggy", "mangled"):
        record = report[f"{student}/{topic}"]
        if record["status"] != "graded":
            continue
        path = demo_course / "submitted" / student / topic / f"{topic}.ipynb"
        results = grade_items(topic, load_namespace(path), seed=SEED)   # a deleted test cell is graded all the same
        by_check = {r.item: [r.score, r.max_score] for r in results}
        assert by_check == record["grades"], (student, topic)
        assert sorted(r.item for r in results if r.status == "pending") == record["pending"]


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
    assert any("worker died in cell" in p for p in results["crash"].problems)
    assert results["flood"].score == results["flood"].max_score
    graded = (work / "autograded" / "flood" / "stability" / "stability.ipynb").stat().st_size
    assert graded < 200_000   # LimitOutput kept the graded notebook small


COUNTING_SOFTMAX = '''import torch

calls = [0]


def stable_softmax(logits, dim=-1):
    """Right for the first 60 calls, then wrong: passes the visible variant (40 cases), fails the hidden one."""
    calls[0] += 1
    shifted = logits - logits.amax(dim=dim, keepdim=True)
    exp = shifted.exp()
    out = exp / exp.sum(dim=dim, keepdim=True)
    return out if calls[0] <= 60 else out * 0.5
'''


def test_the_spec_is_the_single_source_of_a_grade(tmp_path, monkeypatch):
    """Deleting a hidden variant from the spec changes the notebook (after build), nbgrader's grade, `check`'s
    points and the exports alike."""
    from autograder.commands.build import write_spec_into_source

    work = scratch_course(ROOT, tmp_path / "course")
    list(generate_assignments(work, ["stability"]))
    release = notebooks.read(work / "release" / "stability" / "stability.ipynb")
    reference = notebooks.solution_sources(notebooks.read(work / "source" / "stability" / "stability.ipynb"))
    target = work / "submitted" / "counter" / "stability"
    target.mkdir(parents=True)
    notebooks.write(_fill(release, {**reference, "stable_softmax": COUNTING_SOFTMAX}), target / "stability.ipynb")

    def graded():
        (result,) = grade_all(work, ["stability"], ["counter"], progress=None, seed=7)
        export_csv(work, tmp_path / "grades.csv", ["stability"])
        exported = next(csv.DictReader(open(tmp_path / "grades.csv", encoding="utf-8")))
        monkeypatch.setenv("AUTOGRADER_GRADING", "1")
        checked = grade_items("stability", load_namespace(target / "stability.ipynb"), seed=7)
        return result.grades["softmax_forward"][0], exported["softmax_forward"], checked[0].score

    assert graded() == (0.0, "0", 0.0)   # the hidden variant (80 cases) catches it
    without_hidden_variants(monkeypatch, "stability", 0)
    assert write_spec_into_source(work, ["stability"]) == ["source/stability/stability.ipynb: test cells differ "
                                                           "from the spec"]
    assert graded() == (3.0, "3", 3.0)   # without it, nbgrader, the CSV and `check` all give the points
