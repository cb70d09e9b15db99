"""A course an instructor cannot break by accident (issue 36), through the real commands on a temporary course.

The settings live in the course (``course_settings.json``); ``AUTOGRADER_SETTINGS`` applies over them and every
command says so. A run with other settings cannot leave an extension without its due date in the gradebook (the
"wedge" that crashed grade, export, pending and generate_feedback with ``None + timedelta``); settings with such an
extension are refused; a gradebook that is missing or does not match the records is refused by every reader, with
the repair; one ``grade`` at a time per course; a settings file that cannot be used is one line.
"""

import csv
import datetime
import json
import os
import shutil
import subprocess
import sys

import pytest

from autograder.commands.build import generate_assignments, nbgrader, scratch_course
from autograder.settings import COURSE_SETTINGS
from tests.proving import ROOT, hand_in, submission

TOPIC = "operators"
DUE = datetime.datetime(2026, 11, 24, 12, 0, tzinfo=datetime.timezone.utc)
HOUR = 3600
# ada: 30 h late with a 48 h extension (on time); bob: 3 h 12 min late, no extension (-10%)
STUDENTS = {"ada": 30 * HOUR, "bob": 3 * HOUR + 12 * 60}
DEADLINES = {"deadlines": {"due": {TOPIC: DUE.isoformat()}, "extensions": {"ada": {TOPIC: 48}},
                           "penalty": {"per_day_percent": 10}}}


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRADER_SETTINGS"}
    env.update(PYTHONWARNINGS="ignore", **extra)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")   # nbgrader runs alembic
    return env


def autograder(course, *args, **env):
    return subprocess.run([sys.executable, "-m", "autograder", "--course", str(course), *args], capture_output=True,
                          text=True, env=_env(**env), timeout=600)


def write_settings(course, values):
    (course / COURSE_SETTINGS).write_text(json.dumps(values), encoding="utf-8")


def gradebook_deadlines(course):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course}/gradebook.db") as gradebook:
        assignment = gradebook.find_assignment(TOPIC)
        return assignment.duedate, {s.student.id: s.extension for s in assignment.submissions}


def grade(course, *args, **env):
    done = autograder(course, "grade", TOPIC, "--workers", "0", *args, **env)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def csv_rows(course, tmp_path):
    done = autograder(course, "export", TOPIC, "--csv", str(tmp_path / "grades.csv"))
    assert done.returncode == 0, done.stderr
    return {r["student"]: r for r in csv.DictReader(open(tmp_path / "grades.csv", encoding="utf-8"))}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    work = scratch_course(ROOT, tmp_path_factory.mktemp("state") / "course")
    list(generate_assignments(work, [TOPIC]))
    for student, offset in STUDENTS.items():
        stamp = (DUE + datetime.timedelta(seconds=offset)).replace(tzinfo=None)
        hand_in(work, student, TOPIC, submission(TOPIC, course=work), stamp=f"{stamp:%Y-%m-%d %H:%M:%S} UTC")
    write_settings(work, DEADLINES)
    grade(work)
    return work


def restore(course):
    """The course as the fixture left it: its settings, its deadlines in the gradebook."""
    write_settings(course, DEADLINES)
    grade(course)


@pytest.mark.e2e
def test_the_settings_in_the_course_are_read_by_grade_with_no_environment_variable(course, tmp_path):
    due, extensions = gradebook_deadlines(course)
    assert due == DUE.replace(tzinfo=None) and extensions == {"ada": datetime.timedelta(hours=48), "bob": None}
    rows = csv_rows(course, tmp_path)
    assert (rows["bob"]["late_percent"], rows["bob"]["total"]) == ("10", "8.1")
    assert (rows["ada"]["late_penalty"], rows["ada"]["total"]) == ("0", "9")


@pytest.mark.e2e
def test_a_run_with_an_override_keeps_the_due_date_and_names_the_override(course, tmp_path):
    """The wedge: one run "without the settings" (here: with an override file that has no deadlines) used to write
    no due date and keep the extension; the course's file is always read now, and the override is named."""
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"call_timeout_s": 61}), encoding="utf-8")
    done = grade(course, "--student", "nobdy", AUTOGRADER_SETTINGS=str(other))
    named = [line for line in done.stderr.splitlines() if "AUTOGRADER_SETTINGS" in line]
    assert named == [f"autograder: settings from AUTOGRADER_SETTINGS={other}, applied over "
                     f"{course / COURSE_SETTINGS}"]
    assert gradebook_deadlines(course)[0] == DUE.replace(tzinfo=None)
    assert csv_rows(course, tmp_path)["bob"]["total"] == "8.1"
    feedback = nbgrader(course, "generate_feedback", TOPIC, "--force", env=_env(AUTOGRADER_SETTINGS=str(other)))
    assert f"AUTOGRADER_SETTINGS={other}" in feedback.stderr
    html = (course / "feedback" / "bob" / TOPIC / f"{TOPIC}.html").read_text(encoding="utf-8")
    assert "Submission time: late by 3 h 12 min: -10% (0.9 points)." in html


@pytest.mark.e2e
def test_an_extension_without_its_due_date_is_refused_and_removing_both_is_consistent(course, tmp_path):
    before = gradebook_deadlines(course)
    write_settings(course, {"deadlines": {"extensions": {"ada": {TOPIC: 48}}, "penalty": {"per_day_percent": 10}}})
    try:
        done = autograder(course, "grade", TOPIC, "--workers", "0")
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.strip() == (
            f"Cannot grade: settings.deadlines.extensions.ada.{TOPIC}: an extension of 48 h, but {TOPIC} has no due "
            f"date (settings.deadlines.due.{TOPIC}): give {TOPIC} its due date, or remove every extension on it")
        assert gradebook_deadlines(course) == before            # nothing written
        write_settings(course, {"deadlines": {"penalty": {"per_day_percent": 10}}})     # the due date removed
        grade(course)
        assert gradebook_deadlines(course) == (None, {"ada": None, "bob": None})
        rows = csv_rows(course, tmp_path)
        assert (rows["bob"]["total"], rows["bob"]["due"], rows["ada"]["total"]) == ("9", "", "9")
        assert autograder(course, "pending").returncode == 0
    finally:
        restore(course)
    assert csv_rows(course, tmp_path)["bob"]["total"] == "8.1"


def _wedge(course):
    """The state the old code left: the due date gone from the gradebook, the extension kept."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course}/gradebook.db") as gradebook:
        gradebook.find_assignment(TOPIC).duedate = None
        gradebook.db.commit()


@pytest.mark.e2e
def test_a_wedged_gradebook_is_refused_by_every_reader_with_the_repair_and_grade_repairs_it(course, tmp_path):
    nbgrader(course, "generate_feedback", TOPIC, "--force")
    feedback = {s: (course / "feedback" / s / TOPIC / f"{TOPIC}.html").read_bytes() for s in STUDENTS}
    _wedge(course)
    expected = (f"the gradebook gives ada an extension on {TOPIC}, which has no due date there (left by an older "
                f"version, or by hand): python -m autograder grade {TOPIC} writes every due date and extension from "
                f"{COURSE_SETTINGS}")
    for command in (["export", TOPIC, "--csv", str(tmp_path / "x.csv")], ["pending"], ["analysis"]):
        done = autograder(course, *command)
        assert done.returncode == 2 and done.stderr.strip() == f"Cannot {command[0]}: {expected}", done.stderr
        assert "Traceback" not in done.stderr
    assert not (tmp_path / "x.csv").exists()
    refused = nbgrader(course, "generate_feedback", TOPIC, "--force", check=False)
    assert refused.returncode != 0 and expected in refused.stderr
    assert {s: (course / "feedback" / s / TOPIC / f"{TOPIC}.html").read_bytes() for s in STUDENTS} == feedback
    grade(course, "--student", "nobdy")                      # the repair the message gives
    assert gradebook_deadlines(course)[0] == DUE.replace(tzinfo=None)
    rows = csv_rows(course, tmp_path)
    assert (rows["bob"]["total"], rows["ada"]["total"]) == ("8.1", "9")


@pytest.mark.e2e
def test_without_the_gradebook_every_reader_refuses_none_is_created_and_grade_force_rebuilds_it(course, tmp_path):
    book = course / "gradebook.db"
    aside = tmp_path / "gradebook.db"
    shutil.move(book, aside)
    roster = tmp_path / "roster.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n    Points Possible,,,,\n"
                      "\"Ada, A\",1,S1,ada,A\n\"Bob, B\",2,S2,bob,A\n", encoding="utf-8")
    try:
        for command in (["export", TOPIC, "--csv", str(tmp_path / "x.csv")],
                        ["export", TOPIC, "--canvas", str(tmp_path / "c.csv"), "--roster", str(roster)],
                        ["pending"], ["analysis"], ["grade", TOPIC, "--workers", "0"]):
            done = autograder(course, *command)
            assert done.returncode == 2, done.stderr
            assert done.stderr.strip() == (
                f"Cannot {command[0]}: no gradebook: {book} does not exist, but grading-records/ holds 2 graded "
                "submission(s); their scores and late penalties live in the gradebook. Put it back (from a backup), "
                "or grade again: python -m autograder grade --force"), done.stderr
            assert not book.exists()
        refused = nbgrader(course, "generate_feedback", TOPIC, "--force", check=False)
        assert refused.returncode != 0 and "no gradebook:" in refused.stderr and not book.exists()
        assert not (tmp_path / "x.csv").exists() and not (tmp_path / "c.csv").exists()
        grade(course, "--force")                                 # the repair the message gives
        assert csv_rows(course, tmp_path)["bob"]["total"] == "8.1"
    finally:
        if not book.exists():
            shutil.move(aside, book)
    assert gradebook_deadlines(course)[0] == DUE.replace(tzinfo=None)


@pytest.mark.e2e
def test_a_gradebook_without_a_graded_submission_is_refused_and_regrading_it_repairs(course, tmp_path):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course}/gradebook.db") as gradebook:
        gradebook.remove_submission(TOPIC, "bob")
    expected = (f"the gradebook has no grades for bob/{TOPIC}, which grading-records/ records as graded (a gradebook "
                "from elsewhere, or a new one?): put the course's gradebook back, or grade it again: "
                f"python -m autograder grade {TOPIC} --student bob --force")
    for command in (["pending"], ["export", TOPIC, "--gradescope", str(tmp_path / "gs")], ["grade", TOPIC]):
        done = autograder(course, *command)
        assert (done.returncode, done.stderr.strip()) == (2, f"Cannot {command[0]}: {expected}"), done.stderr
    assert not (tmp_path / "gs").exists()
    grade(course, "--student", "bob", "--force")
    assert csv_rows(course, tmp_path)["bob"]["total"] == "8.1"


@pytest.mark.e2e
def test_one_grade_at_a_time_and_a_dead_holders_lock_is_taken_over(course):
    lock = course / ".grading.lock"
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        lock.write_text(json.dumps({"pid": holder.pid, "host": os.uname().nodename,
                                    "started": "2026-11-27T23:00:00+00:00"}), encoding="utf-8")
        done = autograder(course, "grade", TOPIC, "--workers", "0")
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.strip() == (
            f"Cannot grade: another `python -m autograder grade` is grading this course (pid {holder.pid} on "
            f"{os.uname().nodename}, started 2026-11-27T23:00:00+00:00); wait for it to finish (if that process is "
            f"gone, remove {lock})")
    finally:
        holder.kill()
        holder.wait()
    done = grade(course, "--student", "nobdy")
    assert f"note: took over the grading lock of pid {holder.pid} (started 2026-11-27T23:00:00+00:00)" in done.stdout
    assert not lock.exists()


@pytest.mark.e2e
@pytest.mark.parametrize("content, message", [
    (None, "{path}: no such settings file"),
    ("{\"deadlines\": {", "{path}: not JSON (Expecting property name enclosed in double quotes: line 1 column 16 "
                           "(char 15))"),
    ("{\"deadlines\": {\"extension\": {}}}", "{path}: unknown setting settings.deadlines.extension"),
    ("{\"grading\": 3}", "{path}: settings.grading takes a JSON object"),
])
def test_a_settings_file_that_cannot_be_used_is_one_line_naming_the_file_and_the_key(tmp_path, content, message):
    course = scratch_course(ROOT, tmp_path / "course")
    path = tmp_path / "override.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    done = autograder(course, "settings", AUTOGRADER_SETTINGS=str(path))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.strip() == "Cannot settings: " + message.format(path=path)
    if content is not None:                   # the same file as the course's own
        shutil.move(path, course / COURSE_SETTINGS)
        done = autograder(course, "grade", TOPIC)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr.strip() == "Cannot grade: " + message.format(path=course / COURSE_SETTINGS)
        refused = nbgrader(course, "db", "student", "list", check=False)
        assert refused.returncode == 2 and refused.stderr.strip() == \
            "Cannot use the course's settings: " + message.format(path=course / COURSE_SETTINGS)
