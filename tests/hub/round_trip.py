"""One class's round trip on the hub, as it happens in a course, recorded for the tests to judge.

The instructor generates and releases ``operators`` in the formgrader (in Chromium). Alice logs in,
fetches it from her Assignments list, answers with a mistake and submits, then answers everything
right and submits again; the due date falls after her second submission; Bob fetches, answers with
a different mistake and submits late. The instructor collects (``nbgrader collect``), grades
(``python -m autograder grade``, the real sandbox, with the due date and a 10%-per-day policy in
``AUTOGRADER_SETTINGS``), generates and releases feedback (``nbgrader generate_feedback``,
``release_feedback``), each as the instructor's own Unix user. Each student then fetches the
feedback in the Assignments list and opens it in JupyterLab. A student's answers are written into
the fetched notebook as that student (the clicking is the browser's; the typing is not tested here:
tests/browser types into notebooks).
"""

import datetime
import json
import shutil
import time
from dataclasses import dataclass, field

from autograder.commands.demo_submissions.operators import CELLS as MISTAKES
from autograder.engine import notebooks
from tests.browser.expected import answers, fill
from tests.hub import accounts, ui

ASSIGNMENT = "operators"
PER_DAY_PERCENT = 10


@dataclass
class StudentRecord:
    account: accounts.Account
    answers: dict                     # the solution cells of their last submission
    submitted: list = field(default_factory=list)   # timestamps, as the Assignments list showed them
    feedback_text: str = ""           # the feedback page's text, as JupyterLab showed it


@dataclass
class RoundTrip:
    release_status: str
    due: datetime.datetime
    students: dict                    # name ("alice", "bob") -> StudentRecord
    commands: dict                    # instructor's command -> CompletedProcess
    settings_path: str


def write_answers(klass, student, cells):
    """The fetched notebook with ``cells`` in its solution cells, written by the student's own user."""
    path = student.home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nb = fill(notebooks.read(path), cells)
    done = accounts.run_as(student, [klass.student_venv / "bin" / "python", "-c",
                                     "import sys; open(sys.argv[1], 'w').write(sys.stdin.read())", path],
                           input=json.dumps(nb, indent=1), env=klass.student_env(student))
    if done.returncode:
        raise AssertionError(f"{student.name} could not write {path}:\n{done.stderr}")


def instructor_command(klass, *argv, settings_path=None, timeout=300):
    env = klass.instructor_env(**({"AUTOGRADER_SETTINGS": settings_path} if settings_path else {}))
    done = accounts.run_as(klass.instructor, [klass.instructor_venv / "bin" / "python", "-m", *argv],
                           cwd=klass.course, env=env, timeout=timeout)
    if done.returncode:
        raise AssertionError(f"{' '.join(map(str, argv))} as {klass.instructor.name} exited with "
                             f"{done.returncode}:\n{done.stdout[-4000:]}\n{done.stderr[-6000:]}")
    return done


def run(klass, hub, browser):
    reference = answers(ASSIGNMENT)
    alice, bob = klass.students
    records = {"alice": StudentRecord(alice, {**reference}), "bob": StudentRecord(bob, {**reference, **{
        "row_sum": MISTAKES["row_sum"]}})}

    context, page = ui.log_in(browser, hub, klass.instructor)
    try:
        status = ui.formgrader_generate_and_release(page, ASSIGNMENT)
    finally:
        context.close()

    pages = {}
    try:
        for name, record in records.items():
            pages[name] = ui.log_in(browser, hub, record.account)
            ui.open_assignment_list(pages[name][1])
            ui.fetch(pages[name][1], ASSIGNMENT)
        # Alice: a first try with a mistake in masked_mean, then everything right.
        write_answers(klass, alice, {**reference, "masked_mean": MISTAKES["masked_mean"]})
        records["alice"].submitted.append(ui.submit(pages["alice"][1], ASSIGNMENT))
        time.sleep(1.1)
        write_answers(klass, alice, reference)
        records["alice"].submitted.append(ui.submit(pages["alice"][1], ASSIGNMENT))
        # The due date: after Alice's second submission, before Bob's.
        time.sleep(1.1)
        due = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0) + datetime.timedelta(seconds=1)
        time.sleep(2.1)
        write_answers(klass, bob, records["bob"].answers)
        records["bob"].submitted.append(ui.submit(pages["bob"][1], ASSIGNMENT))

        settings_path = klass.base / "course-settings.json"
        settings_path.write_text(json.dumps({"deadlines": {"due": {ASSIGNMENT: due.isoformat()},
                                                           "penalty": {"per_day_percent": PER_DAY_PERCENT}}}))
        commands = {}
        commands["collect"] = instructor_command(klass, "nbgrader", "collect", ASSIGNMENT)
        for record in records.values():
            if not (klass.course / "submitted" / record.account.name / ASSIGNMENT).is_dir():
                raise AssertionError(f"nbgrader collect collected nothing for {record.account.name}:\n"
                                     f"{commands['collect'].stderr[-4000:]}")
        commands["grade"] = instructor_command(klass, "autograder", "grade", ASSIGNMENT, "--workers", "0",
                                               settings_path=str(settings_path))
        commands["generate_feedback"] = instructor_command(klass, "nbgrader", "generate_feedback", ASSIGNMENT,
                                                           settings_path=str(settings_path))
        commands["release_feedback"] = instructor_command(klass, "nbgrader", "release_feedback", ASSIGNMENT)

        for name, record in records.items():
            page = pages[name][1]
            ui.fetch_feedback(page, ASSIGNMENT)
            record.feedback_text = ui.read_feedback(page, ASSIGNMENT)
    finally:
        for context, _ in pages.values():
            context.close()
    return RoundTrip(status, due, records, commands, str(settings_path))


def gradebook_copy(klass, dest):
    """A copy of the instructor's gradebook, to read with nbgrader's API without touching theirs."""
    shutil.copy2(klass.course / "gradebook.db", dest)
    return f"sqlite:///{dest}"
