"""``run_autograder``'s choice of the notebook, without a container: the file named for the assignment, else the only
notebook; never a symbolic link (root reads it, and a link could point at the grader's files)."""

import os

import pytest

from autograder.course.gradescope.run import Layout, find_notebook


@pytest.mark.quick
def test_the_notebook_named_for_the_assignment_else_the_only_one(tmp_path):
    layout = Layout(tmp_path)
    (layout.submission / "sub").mkdir(parents=True)
    (layout.submission / "notes.ipynb").write_text("{}")
    assert find_notebook(layout, "stability") == (layout.submission / "notes.ipynb", None)
    (layout.submission / "sub" / "stability.ipynb").write_text("{}")
    assert find_notebook(layout, "stability") == (layout.submission / "sub" / "stability.ipynb", None)


@pytest.mark.quick
def test_a_link_is_never_graded(tmp_path):
    layout = Layout(tmp_path)
    layout.submission.mkdir()
    secret = tmp_path / "source_map.json"
    secret.write_text("{}")
    os.symlink(secret, layout.submission / "stability.ipynb")
    path, why = find_notebook(layout, "stability")
    assert path is None and "No notebook named stability.ipynb" in why
