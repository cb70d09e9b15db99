"""What a student can reach on the hub, tried as the real Unix users after the class's round trip.

Bob tries, with shell commands and nbgrader's own, to list, read or replace Alice's submission and
feedback and the instructor's files. The homes (mode 0700) and nbgrader's exchange modes stop what
they can; what nbgrader's exchange lets through (a submission in another's name, a backdated one, a
symbolic link to the instructor's files) the course's collect refuses (autograder/nbgrader_plugins/exchange_collect.py).
"""

import datetime
import json
import stat

import pytest
from nbgrader.utils import parse_utc

from autograder.engine import notebooks
from tests.hub import accounts, ui
from tests.hub.conftest import COURSE_ID
from tests.hub.round_trip import ASSIGNMENT, instructor_command

pytestmark = [pytest.mark.e2e, pytest.mark.browser]


def as_student(klass, student, *argv):
    return accounts.run_as(student, argv, env=klass.student_env(student))


def denied(done):
    return done.returncode != 0 and "Permission denied" in done.stderr


def course_dir(klass, *parts):
    return klass.exchange.joinpath(COURSE_ID, *parts)


def collected(klass, student):
    """(timestamp, row_sum's solution cell) of what the instructor's course holds as ``student``'s submission."""
    where = klass.course / "submitted" / student.name / ASSIGNMENT
    nb = notebooks.read(where / f"{ASSIGNMENT}.ipynb")
    return parse_utc((where / "timestamp.txt").read_text()), notebooks.solution_sources(nb)["row_sum"]


def submissions_of(klass, student):
    """The student's own submissions in the exchange (root lists what no student can)."""
    return sorted(p for p in course_dir(klass, "inbound").iterdir()
                  if p.name.startswith(student.name + "+") and p.owner() == student.name)


def collect_again(klass):
    return instructor_command(klass, "nbgrader", "collect", "--update", ASSIGNMENT).stderr


def test_the_hub_refuses_another_students_password(klass, hub, browser):
    """PAM checks the real accounts' passwords: Bob cannot log in as Alice with his own."""
    alice, bob = klass.students
    assert ui.log_in_refused(browser, hub, alice.name, bob.password) == "Invalid username or password"


def test_a_student_cannot_list_the_submissions_or_the_feedback(klass, round_trip):
    _, bob = klass.students
    assert as_student(klass, bob, "ls", course_dir(klass, "outbound")).stdout.split() == [ASSIGNMENT]
    for sub in ("inbound", "feedback"):
        assert denied(as_student(klass, bob, "ls", course_dir(klass, sub))), sub
    # What is there to find: Alice's two submissions, each under a name with 12 random characters.
    alice_dirs = [p.name for p in submissions_of(klass, klass.students[0])]
    assert len(alice_dirs) == 2 and all(len(name.rsplit("+", 1)[1]) == 12 for name in alice_dirs)


def test_a_student_cannot_read_nor_replace_another_students_submission_even_by_its_name(klass, round_trip):
    """nbgrader leaves a submission 0777 with its files 0644; the kit's PrivateSubmit gives it to the instructor's
    group alone (autograder/nbgrader_plugins/exchange_submit.py)."""
    alice, bob = klass.students
    for submission in submissions_of(klass, alice):
        info = submission.stat()
        assert (stat.S_IMODE(info.st_mode), info.st_gid) == (0o770, klass.instructor.gid), submission
        notebook = submission / f"{ASSIGNMENT}.ipynb"
        assert stat.S_IMODE(notebook.stat().st_mode) == 0o640
        assert denied(as_student(klass, bob, "ls", submission))
        assert denied(as_student(klass, bob, "cat", notebook))
        assert denied(as_student(klass, bob, "cp", bob.home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", notebook))
        assert denied(as_student(klass, bob, "rm", "-f", notebook))
        assert notebook.exists()


def test_a_student_cannot_read_another_students_home_nor_the_instructors_course(klass, round_trip):
    alice, bob = klass.students
    targets = [alice.home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
               alice.home / ".local" / "share" / "jupyter" / "nbgrader_cache" / COURSE_ID,
               alice.home / ASSIGNMENT / "feedback",
               klass.course / "gradebook.db", klass.course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
               klass.course / "submitted", klass.course / "autograded", klass.course / "feedback"]
    for target in targets:
        assert target.exists(), target
        tool = "ls" if target.is_dir() else "cat"
        assert denied(as_student(klass, bob, tool, target)), target


def test_a_student_cannot_change_the_release_nor_the_feedback(klass, round_trip):
    _, bob = klass.students
    released = course_dir(klass, "outbound", ASSIGNMENT, f"{ASSIGNMENT}.ipynb")
    before = released.read_bytes()
    assert denied(as_student(klass, bob, "cp", bob.home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", released))
    assert denied(as_student(klass, bob, "touch", course_dir(klass, "outbound", ASSIGNMENT, "extra.py")))
    assert denied(as_student(klass, bob, "touch", course_dir(klass, "feedback", "extra.html")))
    assert released.read_bytes() == before


def test_a_submission_in_another_students_name_is_not_collected(klass, round_trip):
    alice, bob = klass.students
    before = collected(klass, alice)
    # nbgrader's own submit lets Bob hand in his notebook as Alice's, later than hers.
    done = as_student(klass, bob, "nbgrader", "submit", ASSIGNMENT, f"--student={alice.name}")
    assert done.returncode == 0, done.stderr
    forged = [p for p in course_dir(klass, "inbound").iterdir()
              if p.name.startswith(alice.name + "+") and p.owner() == bob.name]
    assert len(forged) == 1
    log = collect_again(klass)
    assert f"Not collected: {forged[0]} (its directory belongs to {bob.name}, not to {alice.name})" in log, log
    assert collected(klass, alice) == before
    assert "for i in range" not in before[1]


def test_a_backdated_submission_is_not_collected(klass, round_trip):
    _, bob = klass.students
    before = collected(klass, bob)
    early = (round_trip.due - datetime.timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    fake = course_dir(klass, "inbound", f"{bob.name}+{ASSIGNMENT}+{early}+backdated123")
    script = ("import shutil, sys; shutil.copytree(sys.argv[1], sys.argv[2]); "
              "open(sys.argv[2] + '/timestamp.txt', 'w').write(sys.argv[3])")
    done = as_student(klass, bob, klass.student_venv / "bin" / "python", "-c", script, bob.home / ASSIGNMENT,
                      fake, early)
    assert done.returncode == 0, done.stderr
    log = collect_again(klass)
    assert f"Not collected: {fake} (it claims to be submitted at" in log and "a backdated submission)" in log, log
    assert collected(klass, bob) == before


def test_a_link_to_the_instructors_files_is_not_collected(klass, round_trip):
    _, bob = klass.students
    before = collected(klass, bob)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    link = course_dir(klass, "inbound", f"{bob.name}+{ASSIGNMENT}+{now}+linked123456")
    solutions = klass.course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    script = ("import os, sys; os.mkdir(sys.argv[1]); os.symlink(sys.argv[2], sys.argv[1] + '/operators.ipynb'); "
              "open(sys.argv[1] + '/timestamp.txt', 'w').write(sys.argv[3])")
    done = as_student(klass, bob, klass.student_venv / "bin" / "python", "-c", script, link, solutions, now)
    assert done.returncode == 0, done.stderr
    log = collect_again(klass)
    assert f"Not collected: {link} ({ASSIGNMENT}.ipynb is not a regular file" in log, log
    assert collected(klass, bob) == before
    assert "for i in range" in before[1]            # still Bob's own loop, not the instructor's solution
    assert json.loads(solutions.read_text())        # the target was there to be taken
