"""The student's path in a real JupyterLab and Chromium, for every assignment.

Open the release notebook, run all cells from the Run menu and read each graded test cell's
"not implemented yet" from the page; put in a correct answer (typed into the editor for
``stability``, written to the file for the others), run all, save with Ctrl+S, and show that
the saved file gets full marks from ``python -m autograder check``.
"""

import re
import shutil
import subprocess
import sys

import pytest
import torch

from autograder.course import notebooks
from autograder.course.build import topics
from tests.browser import lab as jl
from tests.demo_submissions.stability import CELLS as BUGGY_CELLS
from tests.proving import ROOT

pytestmark = pytest.mark.browser
TYPED = "stability"                       # the assignment whose answers are typed key by key
TOPICS = topics(ROOT)


def answers(topic):
    """``{grade_id: solution text}`` from the source notebook: what a perfect student types."""
    return notebooks.solution_sources(notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb"))


def student_copy(course, topic):
    """The committed release notebook, as the student receives it, at ``student/<topic>/<topic>.ipynb``."""
    target = course / "student" / topic / f"{topic}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / "release" / topic / f"{topic}.ipynb", target)
    return target, notebooks.read(target)


def graded_checks(nb):
    """``{cell index: check name}`` for the graded test cells (the check each one calls)."""
    found = {}
    for index, cell in enumerate(nb["cells"]):
        if notebooks.is_graded_test(cell):
            found[index] = re.search(r"(check_\w+)\(", notebooks.source_text(cell)).group(1)
    return found


def pending_without_gpu(topic, check):
    """A CUDA-only check on a machine without one reports that it needs a GPU, whatever the answer."""
    return topic == "amp" and check == "check_speed" and not torch.cuda.is_available()


def assert_each_check_says_not_implemented(topic, nb, shown):
    for index, check in graded_checks(nb).items():
        cell = shown[index]
        assert cell.failed or pending_without_gpu(topic, check), (check, cell.text[-800:])
        assert f"[{check}]" in cell.text, (check, cell.text[-800:])
        if not pending_without_gpu(topic, check):
            assert "not implemented yet" in cell.text, (check, cell.text[-800:])


def assert_all_ran_and_passed(shown):
    assert all(isinstance(c.count, int) for c in shown if c.code), [c.prompt for c in shown if c.code]
    failed = {c.index: c.text[-800:] for c in shown if c.failed}
    assert not failed, failed


def assert_saved_from_the_page(path, expected):
    """The file on disk holds what the page ran: every code cell executed, the answers in place."""
    nb = notebooks.read(path)
    assert all(c.get("execution_count") for c in nb["cells"] if c["cell_type"] == "code")
    for cell in nb["cells"]:
        if notebooks.is_solution(cell):
            assert notebooks.source_text(cell).rstrip() == expected[notebooks.grade_id(cell)].rstrip()


def grade(topic, path, cwd):
    """The grader's command line; only its exit status counts (0: no graded item failed)."""
    return subprocess.run([sys.executable, "-m", "autograder", "check", topic, str(path)], cwd=cwd,
                          capture_output=True, text=True, timeout=600)


def open_and_run_stub(page, lab, course, topic):
    path, nb = student_copy(course, topic)
    jl.open_notebook(page, lab, path.relative_to(course).as_posix(), len(nb["cells"]))
    assert not any(c.count for c in jl.cells(page) if c.code)
    shown, stops = jl.run_all_past_failures(page)
    assert stops, "running the untouched notebook raised nowhere"
    assert_each_check_says_not_implemented(topic, nb, shown)
    return path, nb, shown


def save_and_grade(page, topic, path, expected, tmp_path):
    assert jl.dirty(page)
    jl.save(page)
    assert not jl.dirty(page)
    assert_saved_from_the_page(path, expected)
    graded = grade(topic, path, tmp_path)
    assert graded.returncode == 0, graded.stdout[-3000:] + graded.stderr[-3000:]


@pytest.mark.parametrize("topic", [t for t in TOPICS if t != TYPED])
def test_release_notebook_then_answers_from_file(page, lab, course, topic, tmp_path):
    path, nb, _ = open_and_run_stub(page, lab, course, topic)
    # The answers go into the file, as if typed; JupyterLab reloads it, runs it and saves it.
    solved = answers(topic)
    for cell in nb["cells"]:
        if notebooks.is_solution(cell):
            cell["source"] = solved[notebooks.grade_id(cell)]
    notebooks.write(nb, path)
    jl.reload_from_disk(page, len(nb["cells"]))       # the page now shows the file, no cell run yet
    assert_all_ran_and_passed(jl.run_all(page))
    save_and_grade(page, topic, path, solved, tmp_path)


def _check_message(topic, check, source):
    """What the check says about ``source``, run here: the message the student must see on the page."""
    from autograder.selfcheck import exec_source
    namespace = exec_source(source, f"<{topic} wrong answer>")
    module = __import__(f"autograder.checks.{topic}", fromlist=[check])
    target = re.search(rf"{check}\((\w+)\)", source_of_test(topic, check)).group(1)
    with pytest.raises(AssertionError) as failure:
        getattr(module, check)(namespace[target])
    return str(failure.value)


def source_of_test(topic, check):
    nb = notebooks.read(ROOT / "release" / topic / f"{topic}.ipynb")
    return next(notebooks.source_text(c) for c in nb["cells"]
                if notebooks.is_graded_test(c) and f"{check}(" in notebooks.source_text(c))


def test_stability_typed_wrong_then_right(page, lab, course, tmp_path, screenshots):
    keep, publish = screenshots
    path, nb, shown = open_and_run_stub(page, lab, course, TYPED)
    tests = graded_checks(nb)
    jl.show(page, min(tests), block="end")          # the first check's message at the bottom of the screen
    jl.screenshot(page, "student-not-implemented.png", keep, publish)

    solution_cell = {notebooks.grade_id(c): i for i, c in enumerate(nb["cells"]) if notebooks.is_solution(c)}
    solved = answers(TYPED)
    # The demo's buggy student: the tutorial's one max over the whole tensor instead of one per row.
    wrong = BUGGY_CELLS["stable_softmax"]
    jl.type_into_cell(page, solution_cell["stable_softmax"], wrong)
    shown = jl.run_all(page)
    failed = [c for c in shown if c.failed]
    first_test = min(tests)
    assert failed and failed[0].index == first_test, [(c.index, c.text[-300:]) for c in failed]
    message = _check_message(TYPED, tests[first_test], wrong)
    assert " ".join(message.split()) in " ".join(failed[0].text.split()), (message, failed[0].text)
    jl.show(page, first_test, block="end")
    jl.screenshot(page, "student-failed-check.png", keep, publish)

    for grade_id, index in solution_cell.items():
        jl.type_into_cell(page, index, solved[grade_id])
    assert_all_ran_and_passed(jl.run_all(page))
    jl.show(page, solution_cell["softmax_cross_entropy"])
    jl.screenshot(page, "student-passed.png", keep, publish)
    save_and_grade(page, TYPED, path, solved, tmp_path)
