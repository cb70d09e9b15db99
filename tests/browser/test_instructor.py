"""The instructor's path in the browser: nbgrader's formgrader inside JupyterLab, and the feedback page.

The temporary course gets its eight assignments in the gradebook (the real ``nbgrader
generate_assignment``) and three of the demo's students for ``stability`` (the reference,
the untouched release notebook, the buggy one), autograded and given feedback by the real
nbgrader commands. The formgrader lists the assignments and shows the scores; the feedback
page of the buggy submission shows the checks' messages.
"""

import re

import pytest
from nbgrader.api import Gradebook

from autograder.course import notebooks
from autograder.course.build import generate_assignments, nbgrader, topics
from tests.browser import lab as jl
from tests.demo_submissions.stability import CELLS as BUGGY_CELLS
from tests.proving import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.e2e]
TOPIC = "stability"
STUDENTS = {"reference": ("Rita", "Reference"), "untouched": ("Uma", "Untouched"), "buggy": ("Bo", "Buggy")}


def _fill(nb, answers):
    for cell in nb["cells"]:
        if notebooks.is_solution(cell) and notebooks.grade_id(cell) in answers:
            cell["source"] = answers[notebooks.grade_id(cell)]
    return nb


def max_score(topic):
    nb = notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb")
    return sum(notebooks.nbgrader_meta(c).get("points", 0) for c in nb["cells"] if notebooks.is_graded_test(c))


@pytest.fixture(scope="module")
def graded_course(course):
    """The course with every assignment generated, three submissions autograded and their feedback."""
    names = topics(course)
    list(generate_assignments(course, names))
    reference = notebooks.solution_sources(notebooks.read(course / "source" / TOPIC / f"{TOPIC}.ipynb"))
    answers = {"reference": reference, "untouched": {}, "buggy": {**reference, **BUGGY_CELLS}}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student, (first, last) in STUDENTS.items():
            gradebook.update_or_create_student(student, first_name=first, last_name=last)
    for student, filled in answers.items():
        target = course / "submitted" / student / TOPIC
        target.mkdir(parents=True, exist_ok=True)
        release = notebooks.read(course / "release" / TOPIC / f"{TOPIC}.ipynb")
        notebooks.write(_fill(release, filled), target / f"{TOPIC}.ipynb")
    nbgrader(course, "autograde", TOPIC)
    nbgrader(course, "generate_feedback", TOPIC)
    return course, names


def _rows(frame, selector="#main-table tr"):
    return [[cell.strip() for cell in row.split("\t")] for row in frame.locator(selector).all_inner_texts()]


def test_formgrader_lists_assignments_and_scores(page, lab, graded_course, screenshots):
    keep, publish = screenshots
    course, names = graded_course
    page.goto(lab.url("lab") + "&reset")
    page.locator("#jp-main-statusbar").wait_for()
    page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click()   # fold the file browser
    jl.menu(page, "Nbgrader", "Formgrader")
    frame = page.frame_locator(".jp-MainAreaWidget iframe")
    table = frame.locator("#main-table td.name")
    table.nth(len(names) - 1).wait_for()
    rows = {row[0]: row for row in _rows(frame)}
    assert sorted(rows) == sorted(names)
    submissions = {name: int(frame.locator("#main-table tr", has=frame.locator(f"td.name[data-order='{name}']"))
                             .locator("td.num-submissions").inner_text()) for name in names}
    assert submissions == {name: (len(STUDENTS) if name == TOPIC else 0) for name in names}
    jl.screenshot(page, "instructor-formgrader.png", keep, publish)

    frame.locator("#main-table td.num-submissions a", has_text=str(len(STUDENTS))).click()
    frame.locator("#main-table td.score").nth(len(STUDENTS) - 1).wait_for()
    scores = {}
    for row in frame.locator("#main-table tr").all():
        student = row.locator("td.student-id").inner_text().strip()
        got, possible = (float(x) for x in re.fullmatch(r"([\d.]+) / ([\d.]+)", row.locator("td.score").inner_text().strip()).groups())
        scores[student] = (got, possible)
    full = max_score(TOPIC)
    assert scores["reference"] == (full, full)
    assert scores["untouched"] == (0, full)
    assert 0 < scores["buggy"][0] < full
    jl.screenshot(page, "instructor-scores.png", keep, publish)


def test_feedback_page_shows_check_messages(page, lab, graded_course, screenshots):
    keep, publish = screenshots
    course, _ = graded_course
    page.goto(lab.url(f"files/feedback/buggy/{TOPIC}/{TOPIC}.html"))
    text = page.locator("body").inner_text()
    full = max_score(TOPIC)
    assert re.search(rf"{TOPIC} \(Score: [\d.]+ / {full:.1f}\)", text), text[:500]
    assert "[check_softmax_forward]" in text and "Hint:" in text
    first = page.get_by_text(re.compile(r"\[check_softmax_forward\]")).first
    first.evaluate("e => e.scrollIntoView({block: 'center'})")
    jl.screenshot(page, "instructor-feedback.png", keep, publish)
