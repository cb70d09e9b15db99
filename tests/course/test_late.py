"""Deadlines and late work (autograder/nbgrader_plugins/late.py, docs/deadlines.md).

The policy's arithmetic on its own (``quick``), then a late submission through the real grader and nbgrader on a
temporary course (``e2e``): it loses exactly what the policy says in nbgrader's gradebook, the grading report, the
printed gradebook, every export (CSV, Gradescope, Canvas) and the feedback nbgrader writes; plain
``nbgrader autograde`` applies the same policy; a kept grade follows a new extension without being graded again.
"""

import csv
import datetime
import json
import os

import pytest

from autograder.commands.build import generate_assignments, nbgrader, scratch_course
from autograder.commands.demo import buggy_cells
from autograder.commands.export import export_csv, export_gradescope
from autograder.commands.grade import grade_all
from autograder.commands.pending import gradebook_text
from autograder.course.canvas import export_canvas
from autograder.course.grading import load_report, points
from autograder.course.late_policy import (DeadlineError, Lateness, check_deadlines, due_date, duration_text, lateness,
                                           penalty_percent)
from autograder.nbgrader_plugins.late import LatePolicy
from autograder.settings import override
from tests.proving import ROOT, hand_in, reference_cells, submission

HOUR, DAY = 3600.0, 86400.0
POLICY = {"deadlines": {"grace_minutes": 15,
                        "penalty": {"per_day_percent": 10, "cap_percent": 25, "zero_after_days": 7}}}


# ------------------------------------------------------------------ the arithmetic

@pytest.mark.quick
@pytest.mark.parametrize("seconds_late, percent", [
    (0, 0), (-5, 0),
    (14 * 60, 0), (15 * 60, 0),                 # within the grace period: on time
    (15 * 60 + 1, 10), (3 * HOUR + 12 * 60, 10),  # the first started day after the grace period
    (DAY + 15 * 60, 10), (DAY + 15 * 60 + 1, 20),  # days are counted from the end of the grace period
    (2 * DAY + HOUR, 25), (6 * DAY, 25),        # 30% and 60%, capped at 25%
    (7 * DAY, 25), (7 * DAY + 1, 100),          # past the cut-off: everything
])
def test_penalty_per_started_day_after_grace_capped_then_zero_after_the_cut_off(seconds_late, percent):
    with override(POLICY):
        assert penalty_percent(seconds_late) == (percent, seconds_late > 7 * DAY)
        late = lateness(21.0, seconds_late)
    assert late.percent == percent and late.points == round(21.0 * percent / 100, 6)


@pytest.mark.quick
def test_the_default_policy_takes_nothing_and_a_bare_per_day_percent_has_no_grace():
    assert penalty_percent(30 * DAY) == (0.0, False)       # no penalty until the instructor sets one
    with override({"deadlines": {"penalty": {"per_day_percent": 10}}}):
        assert penalty_percent(1) == (10.0, False)
        assert penalty_percent(DAY - 1) == (10.0, False)
        assert penalty_percent(12 * DAY) == (100.0, False)   # the cap (100%) by default, no cut-off


@pytest.mark.quick
def test_what_people_read():
    assert duration_text(45) == "45 s" and duration_text(3 * HOUR + 12 * 60 + 30) == "3 h 12 min"
    assert duration_text(2 * DAY + 5 * 60) == "2 d 5 min"
    with override(POLICY):
        assert lateness(21, 3 * HOUR + 12 * 60).describe() == "late by 3 h 12 min: -10% (2.1 points)"
        assert lateness(21, 10 * 60).describe() == \
            "late by 10 min, within the 15-minute grace period: no penalty"
        assert lateness(9, 8 * DAY).describe() == "late by 8 d, past the cut-off of 7 days: scores 0 (-9 points)"
        assert lateness(9, 0).describe() == "on time"
    assert Lateness(60, 0, 0).describe() == "late by 1 min: no penalty"


@pytest.mark.quick
def test_nbgraders_plugin_returns_the_policys_points():
    with override(POLICY):
        assert LatePolicy().late_submission_penalty("ada", 9.0, 2 * DAY + HOUR) == 2.25
        assert LatePolicy().late_submission_penalty("ada", 9.0, 10 * 60) == 0.0


@pytest.mark.quick
def test_bad_deadlines_are_refused_with_the_reason_and_unknown_names_warned():
    with override({"deadlines": {"due": {"operators": "2026-12-01T23:59:00+01:00"}}}):
        assert due_date("operators") == datetime.datetime(2026, 12, 1, 22, 59, tzinfo=datetime.timezone.utc)
        assert due_date("basics") is None
    with override({"deadlines": {"due": {"operators": "2026-12-01 23:59"}}}):
        with pytest.raises(DeadlineError) as naive:
            check_deadlines(["operators"])
    assert "has no UTC offset" in str(naive.value) and "2026-12-01T23:59:00+00:00" in str(naive.value)
    with override({"deadlines": {"due": {"operators": "next friday"}}}):
        with pytest.raises(DeadlineError) as garbled:
            check_deadlines(["operators"])
    assert "'next friday' is not an ISO 8601 date and time" in str(garbled.value)
    with override({"deadlines": {"extensions": {"ada": {"operators": -2}}}}):
        with pytest.raises(DeadlineError) as negative:
            check_deadlines(["operators"])
    assert "extensions.ada.operators: -2 is not a number of hours >= 0" in str(negative.value)
    with override({"deadlines": {"penalty": {"cap_percent": 150}}}):
        with pytest.raises(DeadlineError) as cap:
            check_deadlines(["operators"])
    assert "cap_percent: 150 is over 100" in str(cap.value)
    with override({"deadlines": {"due": {"operatros": "2026-12-01T23:59:00Z"},
                                 "extensions": {"ada": {"basic": 24}}}}):
        warned = check_deadlines(["basics", "operators"])
    assert len(warned) == 2 and "'operatros', which is not an assignment of this course" in warned[0]
    assert "extensions.ada names 'basic'" in warned[1]


# ------------------------------------------------------------------ through nbgrader

TOPIC = "operators"
DUE = datetime.datetime(2026, 11, 24, 12, 0, tzinfo=datetime.timezone.utc)
# student: (answers, time after the due date or None for no timestamp.txt, percent taken)
STUDENTS = {
    "early": ("reference", -2 * HOUR, 0),
    "late3h": ("reference", 3 * HOUR + 12 * 60, 10),
    "buggylate": ("buggy", 3 * HOUR + 12 * 60, 10),
    "twodays": ("reference", 2 * DAY + HOUR, 25),       # 3 started days: 30%, capped at 25%
    "cutoff": ("reference", 8 * DAY, 100),              # past zero_after_days
    "grace": ("reference", 10 * 60, 0),                 # within the grace period
    "extended": ("reference", 20 * HOUR, 0),            # 20 h late without the 24 h extension
    "nostamp": ("reference", None, 0),
}
SETTINGS = {"deadlines": {**POLICY["deadlines"], "due": {TOPIC: DUE.isoformat()},
                          "extensions": {"extended": {TOPIC: 24}}}}


def _stamp(offset):
    return f"{(DUE + datetime.timedelta(seconds=offset)).replace(tzinfo=None):%Y-%m-%d %H:%M:%S} UTC"


@pytest.fixture(scope="module")
def late_course(tmp_path_factory):
    work = scratch_course(ROOT, tmp_path_factory.mktemp("late") / "course")
    list(generate_assignments(work, [TOPIC]))
    reference = reference_cells(TOPIC, work)
    answers = {"reference": reference, "buggy": {**reference, **buggy_cells(TOPIC)}}
    for student, (kind, offset, _) in STUDENTS.items():
        hand_in(work, student, TOPIC, submission(TOPIC, answers[kind], work),
                stamp=None if offset is None else _stamp(offset))
    settings_file = work / "deadlines.json"
    settings_file.write_text(json.dumps(SETTINGS), encoding="utf-8")
    lines = []
    with override(SETTINGS):
        grade_all(work, [TOPIC], workers=0, progress=lambda text, **_: lines.append(text))
    return work, settings_file, lines


def _gradebook(course):
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(f"sqlite:///{course}/gradebook.db") as gradebook:
        assignment = gradebook.find_assignment(TOPIC)
        for student in STUDENTS:
            s = gradebook.find_submission(TOPIC, student)
            found[student] = dict(score=s.score, penalty=s.late_submission_penalty, late=s.total_seconds_late,
                                  extension=s.extension, timestamp=s.timestamp, duedate=assignment.duedate)
    return found


def _expected(score, percent):
    return round(score * percent / 100, 6)


@pytest.mark.e2e
def test_nbgraders_gradebook_holds_the_due_date_the_extension_and_the_policys_penalty(late_course):
    course, _, _ = late_course
    book = _gradebook(course)
    assert book["buggylate"]["score"] < book["late3h"]["score"] == 9     # a partial score loses 10% of itself
    for student, (_, offset, percent) in STUDENTS.items():
        entry = book[student]
        assert entry["duedate"] == DUE.replace(tzinfo=None), student
        assert entry["penalty"] == pytest.approx(_expected(entry["score"], percent), abs=1e-9), student
        if offset is None:
            assert entry["timestamp"] is None and entry["late"] == 0
        else:
            assert entry["timestamp"] == (DUE + datetime.timedelta(seconds=offset)).replace(tzinfo=None)
    assert book["extended"]["extension"] == datetime.timedelta(hours=24) and book["extended"]["late"] == 0
    assert book["late3h"]["late"] == 3 * HOUR + 12 * 60 and book["late3h"]["extension"] is None
    assert book["grace"]["late"] == 600 and book["grace"]["penalty"] == 0


@pytest.mark.e2e
def test_the_report_and_the_printed_gradebook_agree_with_nbgrader(late_course):
    course, _, lines = late_course
    report, book = load_report(course), _gradebook(course)
    for student, (_, offset, percent) in STUDENTS.items():
        record = report[f"{student}/{TOPIC}"]
        score = points(record["grades"])[0]
        assert score == book[student]["score"]
        assert record["late_percent"] == percent and record["late_penalty"] == book[student]["penalty"], student
        assert record["due"] == (DUE + datetime.timedelta(hours=24 if student == "extended" else 0)).isoformat()
        submitted = "" if offset is None else (DUE + datetime.timedelta(seconds=offset)).isoformat()
        assert record["submitted_at"] == submitted, student
    late3h = report[f"late3h/{TOPIC}"]
    assert late3h["seconds_late"] == 3 * HOUR + 12 * 60
    assert late3h["late_note"] == "late by 3 h 12 min: -10% (0.9 points)"
    assert report[f"cutoff/{TOPIC}"]["late_note"] == "late by 8 d, past the cut-off of 7 days: scores 0 (-9 points)"
    assert report[f"grace/{TOPIC}"]["late_note"] == "late by 10 min, within the 15-minute grace period: no penalty"
    assert report[f"extended/{TOPIC}"]["late_note"] == "on time"
    assert report[f"nostamp/{TOPIC}"]["late_note"] == \
        "no submission time (no timestamp.txt): not checked against the due date"
    with override(SETTINGS):
        text = gradebook_text([TOPIC], list(STUDENTS), report)
    assert "late3h     8.1/9 (late -10%)" in text and "cutoff     0/9 (late -100%)" in text
    assert "early      9/9 " in text and "  late3h/operators: late by 3 h 12 min: -10% (0.9 points)" in text
    assert "grace/operators: late by 10 min" in text     # late, if without a penalty, is listed


@pytest.mark.e2e
def test_every_export_takes_the_penalty(late_course, tmp_path):
    course, _, _ = late_course
    report = load_report(course)
    (path,) = export_csv(course, tmp_path / "grades.csv", [TOPIC])
    rows = {r["student"]: r for r in csv.DictReader(open(path, encoding="utf-8"))}
    assert set(rows) == set(STUDENTS)
    for student, (_, _, percent) in STUDENTS.items():
        score = points(report[f"{student}/{TOPIC}"]["grades"])[0]
        penalty = _expected(score, percent)
        assert (rows[student]["score"], rows[student]["late_penalty"], rows[student]["total"]) == \
            (f"{score:g}", f"{penalty:g}", f"{round(score - penalty, 6):g}"), student
        assert rows[student]["late_percent"] == f"{percent:g}"
    assert rows["late3h"]["seconds_late"] == "11520" and rows["late3h"]["due"] == DUE.isoformat()
    (wide,) = export_csv(course, tmp_path / "wide.csv", [TOPIC], wide=True)
    wide_rows = {r["student"]: r for r in csv.DictReader(open(wide, encoding="utf-8"))}
    assert wide_rows["late3h"][TOPIC] == "8.1" and wide_rows["twodays"]["total"] == "6.75"
    assert wide_rows["cutoff"]["total"] == "0"

    export_gradescope(course, tmp_path / "gs", [TOPIC])
    late3h = json.loads((tmp_path / "gs" / "late3h" / TOPIC / "results.json").read_text())
    assert late3h["score"] == 8.1 and sum(t["score"] for t in late3h["tests"]) == 9
    assert late3h["output"] == "late by 3 h 12 min: -10% (0.9 points); score after the penalty 8.1"
    early = json.loads((tmp_path / "gs" / "early" / TOPIC / "results.json").read_text())
    assert early["score"] == 9 and "output" not in early
    grace = json.loads((tmp_path / "gs" / "grace" / TOPIC / "results.json").read_text())
    assert grace["score"] == 9 and "within the 15-minute grace period" in grace["output"]

    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Operators (4242)\n"
                      "    Points Possible,,,,,9\n"
                      + "".join(f"\"{s.title()}, A\",{100 + i},S{i},{s},A,\n" for i, s in enumerate(STUDENTS)),
                      encoding="utf-8")
    assert export_canvas(course, tmp_path / "canvas.csv", [TOPIC], roster) == []
    table = list(csv.reader(open(tmp_path / "canvas.csv", encoding="utf-8")))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Operators (4242)"]
    assert table[1] == ["Points Possible", "", "", "", "", "9"]
    canvas = {row[3]: row[5] for row in table[2:]}
    assert canvas == {s: f"{round(points(report[f'{s}/{TOPIC}']['grades'])[0] * (1 - p / 100), 6):g}"
                      for s, (_, _, p) in STUDENTS.items()}
    assert canvas["late3h"] == "8.1" and canvas["twodays"] == "6.75" and canvas["cutoff"] == "0"


@pytest.mark.e2e
def test_the_feedback_nbgrader_writes_says_how_late_and_what_it_cost(late_course):
    course, settings_file, _ = late_course
    # without the course's settings (a formgrader started without them): the gradebook's penalty still stands
    nbgrader(course, "generate_feedback", TOPIC, "--student", "late3h", "--force")
    alone = (course / "feedback" / "late3h" / TOPIC / f"{TOPIC}.html").read_text(encoding="utf-8")
    assert "Submission time: late by 3 h 12 min: -10% (0.9 points)." in alone
    nbgrader(course, "generate_feedback", TOPIC, "--force", env={"AUTOGRADER_SETTINGS": str(settings_file)})
    html = {s: (course / "feedback" / s / TOPIC / f"{TOPIC}.html").read_text(encoding="utf-8") for s in STUDENTS}
    assert ("Submission time: late by 3 h 12 min: -10% (0.9 points).</strong> Submitted 2026-11-24 15:12:00 UTC, "
            "due 2026-11-24 12:00:00 UTC.") in html["late3h"]
    assert "Late submission penalty (Score: -0.9)" in html["late3h"]          # nbgrader's own line
    assert "(Score: 8.1 / 9.0)" in html["late3h"]
    assert "Submission time: on time.</strong> Submitted 2026-11-25 08:00:00 UTC, due 2026-11-25 12:00:00 UTC " \
           "(with your extension)." in html["extended"]
    assert "Submission time: on time." in html["early"] and "Late submission penalty" not in html["early"]
    assert "Submission time" not in html["nostamp"]


@pytest.mark.e2e
def test_plain_nbgrader_autograde_applies_the_same_policy(late_course):
    from nbgrader.api import Gradebook

    course, settings_file, _ = late_course
    with Gradebook(f"sqlite:///{course}/gradebook.db") as gradebook:     # forget what grade wrote
        gradebook.find_assignment(TOPIC).duedate = None
        submission = gradebook.find_submission(TOPIC, "twodays")
        for nb in submission.notebooks:
            nb.late_submission_penalty = None
        gradebook.db.commit()
    done = nbgrader(course, "autograde", TOPIC, "--student", "twodays", "--force",
                    env={"AUTOGRADER_SETTINGS": str(settings_file)})
    assert "Late submission penalty: 2.25" in done.stderr
    book = _gradebook(course)["twodays"]
    assert book["duedate"] == DUE.replace(tzinfo=None) and book["penalty"] == 2.25 and book["score"] == 9


@pytest.mark.e2e
def test_a_kept_grade_follows_a_new_extension_without_being_graded_again(late_course):
    course, _, _ = late_course
    before = load_report(course)[f"late3h/{TOPIC}"]
    lines = []
    granted = {"deadlines": {**SETTINGS["deadlines"], "extensions": {"extended": {TOPIC: 24}, "late3h": {TOPIC: 4}}}}
    with override(granted):
        grade_all(course, [TOPIC], students=["late3h"], workers=0, progress=lambda text, **_: lines.append(text))
    after = load_report(course)[f"late3h/{TOPIC}"]
    assert any("1 unchanged since they were recorded" in line for line in lines), lines
    assert after["digest"] == before["digest"] and after["seed"] == before["seed"]
    assert (after["late_penalty"], after["seconds_late"], after["late_note"]) == (0.0, 0.0, "on time")
    assert after["due"] == (DUE + datetime.timedelta(hours=4)).isoformat()
    assert _gradebook(course)["late3h"]["penalty"] == 0 and _gradebook(course)["late3h"]["extension"] == \
        datetime.timedelta(hours=4)
    with override(SETTINGS):      # the extension withdrawn: the penalty is back
        grade_all(course, [TOPIC], students=["late3h"], workers=0, progress=None)
    assert load_report(course)[f"late3h/{TOPIC}"]["late_penalty"] == 0.9
    assert _gradebook(course)["late3h"]["penalty"] == 0.9 and before["late_penalty"] == 0.9


@pytest.mark.e2e
def test_grade_stops_on_a_due_date_it_cannot_read_before_grading_anything(tmp_path):
    import subprocess
    import sys

    course = scratch_course(ROOT, tmp_path / "course")
    (course / "submitted" / "ada" / TOPIC).mkdir(parents=True)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"deadlines": {"due": {TOPIC: "2026-12-01 23:59"}}}), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "autograder", "--course", str(course), "grade", TOPIC, "--workers",
                           "0"], capture_output=True, text=True, env={**os.environ, "AUTOGRADER_SETTINGS": str(bad)},
                          timeout=300)
    assert done.returncode == 2 and done.stdout == ""
    named, refused = done.stderr.strip().splitlines()      # the override in force is named, then the one refusal
    assert named == (f"autograder: settings from AUTOGRADER_SETTINGS={bad}, applied over the defaults (no "
                     "course_settings.json)")
    assert refused == ("Cannot grade: settings.deadlines.due.operators: '2026-12-01 23:59' has no UTC "
                                   "offset; write it with one (e.g. \"2026-12-01T23:59:00+00:00\") so that it means "
                                   "one instant everywhere")
    assert not (course / "gradebook.db").exists() and not (course / "grading-report.json").exists()
