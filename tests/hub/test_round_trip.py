"""A class on a real JupyterHub: release, fetch, submit (twice, and late), collect, grade, feedback.

The round trip itself is ``tests/hub/round_trip.py`` (run once, as the ``round_trip`` fixture); these
tests judge what it left: the exchange, the instructor's course, nbgrader's gradebook, and what each
student's JupyterLab showed.
"""

import re

import psutil
import pytest
from nbgrader.api import Gradebook
from nbgrader.utils import parse_utc

from tests.browser.expected import check_messages, flat
from tests.hub import accounts
from tests.hub.conftest import COURSE_ID
from tests.hub.round_trip import ASSIGNMENT, PER_DAY_PERCENT, gradebook_copy

pytestmark = [pytest.mark.e2e, pytest.mark.browser]

FULL = 9.0          # operators: masked_mean 2 + 2, row_sum 2 + 1 + 2
BOB_SCORE = 4.0     # his row_sum loops over slices: the three row_sum items fail, masked_mean's two pass


def test_the_instructor_released_the_assignment_to_the_exchange(klass, round_trip):
    assert round_trip.release_status == "released"
    released = klass.exchange / COURSE_ID / "outbound" / ASSIGNMENT
    assert sorted(p.name for p in released.iterdir()) == [f"{ASSIGNMENT}.ipynb"]


def test_each_submission_reached_the_exchange_and_collect_took_the_latest(klass, round_trip):
    alice, bob = round_trip.students["alice"], round_trip.students["bob"]
    assert len(alice.submitted) == 2 and len(set(alice.submitted)) == 2
    assert len(bob.submitted) == 1
    times = [parse_utc(t) for t in alice.submitted + bob.submitted]
    due = round_trip.due.replace(tzinfo=None)
    assert times[0] < times[1] < due < times[2], (times, due)
    for record in (alice, bob):
        collected = klass.course / "submitted" / record.account.name / ASSIGNMENT / "timestamp.txt"
        assert parse_utc(collected.read_text()) == parse_utc(record.submitted[-1])


def test_the_gradebook_has_the_grades_and_the_late_penalty(klass, round_trip, tmp_path):
    with Gradebook(gradebook_copy(klass, tmp_path / "gradebook.db")) as gradebook:
        alice = gradebook.find_submission(ASSIGNMENT, round_trip.students["alice"].account.name)
        bob = gradebook.find_submission(ASSIGNMENT, round_trip.students["bob"].account.name)
        assert (alice.score, alice.max_score, alice.late_submission_penalty) == (FULL, FULL, 0.0)
        # autograder/nbgrader_plugins/late.py: per started day late, PER_DAY_PERCENT of the points earned, rounded to 6 places
        assert (bob.score, bob.max_score) == (BOB_SCORE, FULL)
        assert bob.late_submission_penalty == round(BOB_SCORE * PER_DAY_PERCENT / 100, 6) == 0.4



def test_each_student_reads_their_feedback_with_the_check_messages(round_trip):
    alice, bob = round_trip.students["alice"], round_trip.students["bob"]
    assert f"{ASSIGNMENT} (Score: {FULL} / {FULL})" in alice.feedback_text
    assert "Submission time: on time." in alice.feedback_text
    assert "CheckFailure" not in alice.feedback_text
    assert alice.feedback_text.count(": passed") == 5

    late = round(BOB_SCORE * PER_DAY_PERCENT / 100, 6)
    assert f"{ASSIGNMENT} (Score: {BOB_SCORE - late} / {FULL})" in bob.feedback_text
    assert f"Late submission penalty (Score: -{late})" in bob.feedback_text
    messages = check_messages(ASSIGNMENT, bob.answers)
    assert sorted(messages) == ["test_row_sum", "test_row_sum_speed", "test_row_sum_vectorized"]
    shown = without_line_numbers(flat(bob.feedback_text))
    for grade_id, message in messages.items():
        if grade_id == "test_row_sum_speed":      # the measured ratios differ from run to run
            message = message.split(":")[0]
        assert without_line_numbers(flat(message)) in shown, (grade_id, message)


def without_line_numbers(text):
    """The check's messages name the line in the student's cell; check_messages runs all cells as one module."""
    return re.sub(r"\(at line \d+: ", "(at line N: ", text)


def test_the_students_servers_run_the_student_kit(klass, round_trip):
    """Each student's JupyterLab (and so their kernels, nbgrader's submit and the visible checks) runs the kit's
    venv, where the instructor's grader is not: no oracle, no grading tools."""
    for student in klass.students:
        servers = [p for p in psutil.process_iter(["uids", "cmdline"])
                   if p.info["uids"] and p.info["uids"].real == student.uid
                   and any(part.endswith("jupyterhub-singleuser") for part in p.info["cmdline"] or [])]
        assert [p.info["cmdline"][1] for p in servers] == [str(klass.student_venv / "bin" / "jupyterhub-singleuser")]
        python = klass.student_venv / "bin" / "python"
        probe = "import autograder.checks.operators, autograder.oracles"
        done = accounts.run_as(student, [python, "-c", probe], env=klass.student_env(student))
        assert "No module named 'autograder.oracles'" in done.stderr, done.stderr
        done = accounts.run_as(student, [python, "-c", "import autograder.course.grading"],
                               env=klass.student_env(student))
        assert "No module named 'autograder.course'" in done.stderr, done.stderr      # the grading tools: none
