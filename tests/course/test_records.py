"""One verdict record: the gradebook, the report, the exports and the feedback agree; an instructor's work is kept.

A class of three on ``basics``, through the real grader and nbgrader: ``grade``, a regrade of one student the way
the formgrader's autograde button does it (nbgrader's API with the course's configuration only), a manual score and
an extra credit written in nbgrader's gradebook, a regrade of everyone; then a check that raises (the grader's own
bug), and its regrade after the fix.
"""

import csv
import dataclasses
import json
import warnings

import pytest

from autograder.checks import items_of
from autograder.cli import main as cli
from autograder.commands.build import generate_assignments, nbgrader, scratch_course
from autograder.commands.demo import _fill
from autograder.commands.demo_submissions.basics import CELLS as BUGGY
from autograder.commands.export import export_csv, export_gradescope
from autograder.commands.grade import grade_all
from autograder.course.grading import load_report, read_grades
from autograder.engine import notebooks
from autograder.engine.records import RecordStore
from autograder.engine.results import GRADER_ERROR_MESSAGE
from tests.proving import ROOT

pytestmark = pytest.mark.e2e
TOPIC = "basics"
SEED = 20261124
FULL = {item.id: [item.points, item.points] for item in items_of(TOPIC)}


def _submit(work, student, answers, drop=()):
    release = notebooks.read(work / "release" / TOPIC / f"{TOPIC}.ipynb")
    nb = _fill(release, answers)
    nb["cells"] = [c for c in nb["cells"] if notebooks.grade_id(c) not in drop]
    target = work / "submitted" / student / TOPIC
    target.mkdir(parents=True, exist_ok=True)
    notebooks.write(nb, target / f"{TOPIC}.ipynb")


def _formgrader_autograde(work, student):
    """What the formgrader's autograde button runs: nbgrader's API, configured by the course's nbgrader_config.py."""
    from nbgrader.apps.api import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(work)).load_config()
    config.CourseDirectory.root = str(work)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcome = NbGraderAPI(config=config).autograde(TOPIC, student, force=True, create=True)
    assert outcome["success"], outcome.get("log")


def _gradebook_edit(work, student, item, **values):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{work / 'gradebook.db'}") as gradebook:
        grade = gradebook.find_grade(f"test_{item}", TOPIC, TOPIC, student)
        for name, value in values.items():
            setattr(grade, name, value)
        gradebook.db.commit()


def _exports_equal_the_gradebook(work, tmp_path, students):
    book = {s: read_grades(work, s, TOPIC) for s in students}
    tmp_path.mkdir()
    (path,) = export_csv(work, tmp_path / "grades.csv", [TOPIC])
    rows = {r["student"]: r for r in csv.DictReader(open(path, encoding="utf-8"))}
    (wide,) = export_csv(work, tmp_path / "wide.csv", [TOPIC], wide=True)
    wide_rows = {r["student"]: r for r in csv.DictReader(open(wide, encoding="utf-8"))}
    export_gradescope(work, tmp_path / "gs", [TOPIC])
    report = load_report(work)
    for student in students:
        total = sum(s for s, _ in book[student].values())
        assert {i: float(rows[student][i]) for i in FULL} == {i: s for i, (s, _) in book[student].items()}
        assert float(rows[student]["total"]) == float(wide_rows[student][TOPIC]) == total
        assert rows[student]["nearest_neighbour"].rsplit(" ", 1)[0] in {*students, "reference solution"} - {student}
        gradescope = json.loads((tmp_path / "gs" / student / TOPIC / "results.json").read_text(encoding="utf-8"))
        assert {t["name"]: t["score"] for t in gradescope["tests"]} == {i: s for i, (s, _) in book[student].items()}
        assert gradescope["score"] == total
        assert report[f"{student}/{TOPIC}"]["grades"] == book[student]
    return book


def test_one_record_the_instructors_work_kept_and_grader_errors(tmp_path, monkeypatch, capsys):
    work = scratch_course(ROOT, tmp_path / "course")
    list(generate_assignments(work, [TOPIC]))
    reference = notebooks.solution_sources(notebooks.read(work / "source" / TOPIC / f"{TOPIC}.ipynb"))
    buggy = {**reference, **BUGGY}
    _submit(work, "ann", reference)
    _submit(work, "bob", buggy)
    _submit(work, "cat", reference, drop={"test_fit_quadratic", "test_to_numpy_views"})   # Done when 3
    students = ["ann", "bob", "cat"]

    lines = []

    def say(text, **_):
        lines.append(text)

    results = {r.student: r for r in grade_all(work, [TOPIC], students, progress=say, seed=SEED)}
    assert results["ann"].grades == FULL and results["cat"].grades == FULL
    assert results["bob"].grades == {**FULL, "grad_of_values": [0.0, 5.0],
                                     "to_numpy_requires_grad": [0.0, 1.0], "to_numpy_views": [0.0, 1.0]}
    cat = RecordStore(work).latest("cat", TOPIC)
    assert {i["item"]: i["note"] for i in cat["items"] if i["note"]} == {
        "fit_quadratic": "its test cell test_fit_quadratic was deleted from the submission: graded from the spec",
        "to_numpy_views": "its test cell test_to_numpy_views was deleted from the submission: graded from the spec"}
    assert read_grades(work, "cat", TOPIC) == FULL
    assert cat["problems"] == [   # and graded once: the worker read the cells nbgrader reads, the deleted ones put back
        "basics.ipynb: test cells deleted (graded from the spec all the same): test_to_numpy_views, test_fit_quadratic"]
    ann = RecordStore(work).latest("ann", TOPIC)
    assert ann["seed"] == SEED and ann["status"] == "graded"
    assert ann["graded_by"].startswith("python -m autograder grade")
    assert ann["digest"] and ann["sandboxed"] is True and ann["changes"] == []

    # bob fixes his notebook; the instructor regrades him with the formgrader's button
    before = load_report(work)
    _submit(work, "bob", reference)
    _formgrader_autograde(work, "bob")
    assert before["bob/basics"]["grades"] != FULL and load_report(work)["bob/basics"]["grades"] == FULL
    bob = RecordStore(work).history("bob", TOPIC)
    assert len(bob) == 2 and bob[-1]["graded_by"].startswith("nbgrader autograde")
    assert {c["item"]: (c["old"], c["new"]) for c in bob[-1]["changes"]} == {
        "grad_of_values": (0.0, 5.0), "to_numpy_requires_grad": (0.0, 1.0), "to_numpy_views": (0.0, 1.0)}
    assert load_report(work)["bob/basics"]["grades"] == FULL     # the export reads it at once

    # the instructor's own work, in the gradebook as the formgrader writes it
    _gradebook_edit(work, "ann", "fit_quadratic", manual_score=2.5)
    _gradebook_edit(work, "bob", "to_numpy_values", extra_credit=1.0)
    book = _exports_equal_the_gradebook(work, tmp_path / "after-manual", students)
    assert book["ann"]["fit_quadratic"] == [2.5, 3.0] and book["bob"]["to_numpy_values"] == [3.0, 2.0]

    # Done when 2: a check that raises an ordinary exception (the grader's own bug), in this grading process
    def check_with_a_bug(*args, **kwargs):
        raise KeyError("a bug in the check")

    def items_with_a_bug(topic):
        return [dataclasses.replace(i, check=check_with_a_bug) if i.id == "grad_of_values" else i
                for i in items_of(topic)]

    monkeypatch.setattr("autograder.engine.trusted_runner.items_of", items_with_a_bug)
    capsys.readouterr()
    status = cli(["--course", str(work), "grade", TOPIC, "--student", "cat", "--workers", "0", "--force",
                  "--seed", str(SEED)])
    printed = capsys.readouterr()
    assert status == 3
    record = RecordStore(work).latest("cat", TOPIC)
    item = next(i for i in record["items"] if i["item"] == "grad_of_values")
    assert item["status"] == "grader error" and item["score"] == 0.0 and item["message"] == GRADER_ERROR_MESSAGE
    assert "KeyError: 'a bug in the check'" in item["detail"]
    assert "GRADER ERRORS" in printed.out + printed.err and "  cat/basics: grad_of_values" in \
        (printed.out + printed.err).splitlines()
    assert read_grades(work, "cat", TOPIC)["grad_of_values"] == [0.0, 5.0]
    assert load_report(work)["cat/basics"]["grader_errors"] == ["grad_of_values"]
    nbgrader(work, "generate_feedback", TOPIC, "--student", "cat", "--force")
    feedback = (work / "feedback" / "cat" / TOPIC / f"{TOPIC}.html").read_text(encoding="utf-8")
    assert "a bug in the check" not in feedback and "KeyError" not in feedback
    assert "Traceback (most recent call last)" not in feedback and "CheckFailure" not in feedback
    assert "the grader itself failed on this item" in feedback
    monkeypatch.undo()

    # the check fixed, ann having broken to_numpy meanwhile: everyone is regraded
    _submit(work, "ann", {**reference, "to_numpy": BUGGY["to_numpy"]})
    lines.clear()
    grade_all(work, [TOPIC], students, progress=say, seed=SEED, force=True)
    book = _exports_equal_the_gradebook(work, tmp_path / "after-regrade", students)
    assert book["ann"]["fit_quadratic"] == [2.5, 3.0] and book["bob"]["to_numpy_values"] == [3.0, 2.0]
    assert book["ann"]["to_numpy_requires_grad"] == [0.0, 1.0] and book["ann"]["to_numpy_views"] == [0.0, 1.0]
    assert book["cat"] == FULL      # the grader error completed by the regrade
    summary = lines[-1].splitlines()
    assert summary[1:] == [
        "Changed by this regrade (automatic scores; manual scores and extra credit are kept):",
        "  ann/basics: to_numpy_requires_grad 1 -> 0 (passed -> failed), to_numpy_views 1 -> 0 (passed -> failed)",
        "  cat/basics: grad_of_values 0 -> 5 (grader error -> passed)"]
    assert len(RecordStore(work).history("ann", TOPIC)) == 2 and len(RecordStore(work).history("cat", TOPIC)) == 3
    assert RecordStore(work).history("ann", TOPIC)[0]["items"] == ann["items"]    # nothing of the earlier is lost
    assert load_report(work)["ann/basics"]["manual"] == {"fit_quadratic": 2.5}
    assert load_report(work)["bob/basics"]["extra_credit"] == {"to_numpy_values": 1.0}
