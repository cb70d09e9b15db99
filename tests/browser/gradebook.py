"""The instructor's side of the temporary course, prepared by the real nbgrader commands.

Every assignment goes into the gradebook (``nbgrader generate_assignment`` through
``autograder.commands.build.generate_assignments``), two of the demo's students submit
``stability`` (the reference solutions, and the tutorial's global-max mistake), and
``nbgrader autograde`` and ``nbgrader generate_feedback`` run on them.

``python -m tests.browser.gradebook COURSE`` does it in a process of its own, so that the browser
tests can start it early and let it run while the student tests use the browser.
"""

import sys
from pathlib import Path

from nbgrader.api import Gradebook

from autograder.commands.build import generate_assignments, nbgrader, topics
from autograder.commands.demo_submissions.stability import CELLS as BUGGY_CELLS
from autograder.engine import notebooks
from tests.browser.expected import answers, fill

TOPIC = "stability"
STUDENTS = {"reference": ("Rita", "Reference"), "buggy": ("Bo", "Buggy")}


def submissions():
    reference = answers(TOPIC)
    return {"reference": reference, "buggy": {**reference, **BUGGY_CELLS}}


def prepare(course):
    course = Path(course)
    list(generate_assignments(course, topics(course)))
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student, (first, last) in STUDENTS.items():
            gradebook.update_or_create_student(student, first_name=first, last_name=last)
    for student, filled in submissions().items():
        target = course / "submitted" / student / TOPIC
        target.mkdir(parents=True, exist_ok=True)
        release = notebooks.read(course / "release" / TOPIC / f"{TOPIC}.ipynb")
        notebooks.write(fill(release, filled), target / f"{TOPIC}.ipynb")
    nbgrader(course, "autograde", TOPIC)
    nbgrader(course, "generate_feedback", TOPIC)


if __name__ == "__main__":
    prepare(sys.argv[1])
