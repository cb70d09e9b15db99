"""The student's path in a real JupyterLab and Chromium, for every assignment.

Open the release notebook, run all cells from the Run menu and read each graded test cell's
"not implemented yet" from the page; put in a correct answer (typed into the editor for
``stability``, written to the file for the others), run all, save with Ctrl+S, and show that
the saved file gets full marks from ``python -m autograder check``.

JupyterLab's Run All stops at the first cell that raises (``stop_on_error``) unless the cell is
tagged ``raises-exception``: the build tags every example and test cell, so one Run All of an
untouched notebook shows every test cell's verdict, and the tests check that it does.
"""

import re
import shutil
import subprocess
import sys

import pytest
import torch

from autograder.commands.build import topics
from autograder.commands.demo_submissions.stability import CELLS as BUGGY_CELLS
from autograder.engine import notebooks
from tests.browser import lab as jl
from tests.browser.expected import answers, check_messages, fill, flat
from tests.proving import ROOT

pytestmark = pytest.mark.browser
TYPED = "stability"                       # the assignment whose answers are typed key by key
TOPICS = topics(ROOT)


def student_copy(course, topic):
    """The committed release notebook, as the student receives it, at ``student/<topic>/<topic>.ipynb``."""
    target = course / "student" / topic / f"{topic}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(ROOT / "release" / topic / f"{topic}.ipynb", target)
    return target, notebooks.read(target)


def graded_checks(nb):
    """``{cell index: check name}`` for the graded test cells (the check each one calls)."""
    return {index: re.search(r"(check_\w+)\(", notebooks.source_text(cell)).group(1)
            for index, cell in enumerate(nb["cells"]) if notebooks.is_graded_test(cell)}


def pending_without_gpu(topic, check):
    """A CUDA-only check on a machine without one may report that it needs a GPU instead."""
    return topic == "amp" and check == "check_speed" and not torch.cuda.is_available()


def assert_each_check_says_not_implemented(topic, nb, shown):
    for index, check in graded_checks(nb).items():
        text = shown[index].text
        assert f"[{check}]" in text, (check, text[-800:])
        if not pending_without_gpu(topic, check):
            assert shown[index].failed and "not implemented yet" in text, (check, text[-800:])


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


def open_and_run_stub(page, lab, course, topic):
    path, nb = student_copy(course, topic)
    jl.open_notebook(page, lab, path.relative_to(course).as_posix(), len(nb["cells"]))
    assert not any(c.count for c in jl.cells(page) if c.code)
    shown = jl.run_all(page)
    # One Run All reaches every cell: the example and test cells carry `raises-exception`.
    assert all(isinstance(c.count, int) for c in shown if c.code), [c.prompt for c in shown if c.code]
    assert any(c.failed for c in shown), "running the untouched notebook raised nowhere"
    assert_each_check_says_not_implemented(topic, nb, shown)
    return path, nb, shown


def save_from_the_page(page, path, expected):
    """Ctrl+S; the tab is no longer dirty and the file holds what the page ran."""
    assert jl.dirty(page)
    jl.save(page)
    assert not jl.dirty(page)
    assert_saved_from_the_page(path, expected)


def submit(page, topic, path, tmp_path):
    """Close and shut the notebook down, as at the end of a session, while the grader's command line
    grades the saved file; only its exit status counts (0: no graded item failed).
    """
    with subprocess.Popen([sys.executable, "-m", "autograder", "check", topic, str(path)], cwd=tmp_path,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as grading:
        jl.close_and_shut_down(page)
        output, _ = grading.communicate(timeout=600)
    assert grading.returncode == 0, output[-6000:]


@pytest.mark.parametrize("topic", [t for t in TOPICS if t != TYPED])
def test_release_notebook_then_answers_from_file(page, lab, course, topic, tmp_path):
    path, nb, _ = open_and_run_stub(page, lab, course, topic)
    # The answers go into the file, as if typed; JupyterLab reloads it, runs it and saves it.
    solved = answers(topic)
    notebooks.write(fill(nb, solved), path)
    jl.reload_from_disk(page, len(nb["cells"]))       # the page now shows the file, no cell run yet
    assert_all_ran_and_passed(jl.run_all(page))
    save_from_the_page(page, path, solved)
    submit(page, topic, path, tmp_path)


def test_stability_typed_wrong_then_right(page, lab, course, tmp_path, screenshots):
    keep, publish = screenshots
    path, nb, _ = open_and_run_stub(page, lab, course, TYPED)
    tests = graded_checks(nb)
    jl.show(page, min(tests), block="end")          # the first check's message at the bottom of the screen
    jl.screenshot(page, "student-not-implemented.png", keep, publish)

    solution_cell = {notebooks.grade_id(c): i for i, c in enumerate(nb["cells"]) if notebooks.is_solution(c)}
    stub = {grade_id: notebooks.source_text(nb["cells"][i]) for grade_id, i in solution_cell.items()}
    solved = answers(TYPED)
    # The demo's buggy student: the tutorial's one max over the whole tensor instead of one per row.
    wrong = BUGGY_CELLS["stable_softmax"]
    jl.type_into_cell(page, solution_cell["stable_softmax"], stub["stable_softmax"], wrong)
    shown = jl.run_all(page)
    failed = [c for c in shown if c.failed]
    expected = check_messages(TYPED, {"stable_softmax": wrong})     # cross-entropy is still the stub
    first = notebooks.grade_id(nb["cells"][failed[0].index]) if failed else None
    assert first == next(iter(expected)), [(c.index, c.text[-300:]) for c in failed]
    assert flat(expected[first]) in flat(failed[0].text), (expected[first], failed[0].text)
    jl.show(page, failed[0].index, block="end")
    jl.screenshot(page, "student-failed-check.png", keep, publish)

    for grade_id, index in solution_cell.items():      # every exercise now, in the order of the notebook
        before = wrong if grade_id == "stable_softmax" else stub[grade_id]
        jl.type_into_cell(page, index, before, solved[grade_id])
    assert_all_ran_and_passed(jl.run_all(page))
    save_from_the_page(page, path, solved)
    jl.show(page, solution_cell["softmax_cross_entropy"])
    jl.screenshot(page, "student-passed.png", keep, publish)        # saved: no dot on the tab
    submit(page, TYPED, path, tmp_path)
