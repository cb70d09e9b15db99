"""The instructor's path in the browser: nbgrader's formgrader inside JupyterLab, and the feedback page.

``tests/browser/gradebook.py`` prepares the temporary course with the real nbgrader commands (all
eight assignments in the gradebook; the reference and the buggy demo student for ``stability``,
autograded, with feedback). The formgrader lists the assignments and shows the scores; the
feedback page of the buggy submission shows the checks' messages.
"""

import re

import pytest

from autograder.commands.build import topics
from autograder.commands.demo_submissions.stability import CELLS as BUGGY_CELLS
from autograder.engine import notebooks
from tests.browser import lab as jl
from tests.browser.expected import answers, check_messages, flat
from tests.browser.gradebook import STUDENTS, TOPIC
from tests.proving import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.e2e]


def max_score(topic):
    nb = notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb")
    return sum(notebooks.nbgrader_meta(c).get("points", 0) for c in nb["cells"] if notebooks.is_graded_test(c))


@pytest.fixture(scope="module")
def graded_course(course, gradebook_job):
    """The course once ``gradebook_job`` (started with the first browser test) has finished."""
    status, log = gradebook_job.wait()
    assert status == 0, f"preparing the gradebook failed:\n{log[-6000:]}"
    return course, topics(course)


def test_formgrader_lists_assignments_and_scores(page, lab, graded_course, screenshots):
    keep, publish = screenshots
    _, names = graded_course
    page.goto(lab.url("lab") + "&reset")
    page.locator("#jp-main-statusbar").wait_for()
    jl.fold_left_sidebar(page)
    jl.menu(page, "Nbgrader", "Formgrader")
    frame = page.frame_locator(".jp-MainAreaWidget iframe")
    frame.locator("#main-table td.name").nth(len(names) - 1).wait_for()      # the table is filled in by AJAX
    listed = {row.locator("td.name").inner_text().strip(): int(row.locator("td.num-submissions").inner_text())
              for row in frame.locator("#main-table tr").all()}
    assert listed == {name: (len(STUDENTS) if name == TOPIC else 0) for name in names}
    jl.screenshot(page, "instructor-formgrader.png", keep, publish)

    frame.locator("#main-table td.num-submissions a", has_text=str(len(STUDENTS))).click()
    frame.locator("#main-table td.score").nth(len(STUDENTS) - 1).wait_for()
    scores = {}
    for row in frame.locator("#main-table tr").all():
        shown = re.fullmatch(r"([\d.]+) / ([\d.]+)", row.locator("td.score").inner_text().strip())
        scores[row.locator("td.student-id").inner_text().strip()] = tuple(float(x) for x in shown.groups())
    full = max_score(TOPIC)
    assert scores["reference"] == (full, full)
    assert 0 < scores["buggy"][0] < full
    jl.screenshot(page, "instructor-scores.png", keep, publish)


def test_feedback_page_shows_check_messages(page, lab, graded_course, screenshots):
    """The buggy student's feedback: the score, and each failed test cell's message as the check wrote it."""
    keep, publish = screenshots
    page.goto(lab.url(f"files/feedback/buggy/{TOPIC}/{TOPIC}.html"))
    text = page.locator("body").inner_text()
    assert re.search(rf"{TOPIC} \(Score: [\d.]+ / {max_score(TOPIC):.1f}\)", text), text[:500]
    messages = check_messages(TOPIC, {**answers(TOPIC), **BUGGY_CELLS})
    assert messages, "the buggy answer fails no visible check"
    for grade_id, message in messages.items():
        assert flat(message) in flat(text), (grade_id, message)
    page.locator(".output_error").first.evaluate("e => e.scrollIntoView({block: 'end'})")
    jl.screenshot(page, "instructor-feedback.png", keep, publish)
