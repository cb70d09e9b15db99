"""Feedback for a submission that could not be read (not a notebook, or over the size limit).

nbgrader's ``generate_feedback`` writes a page for each notebook under ``autograded/<student>/<assignment>/``; a
submission that nbgrader could not read leaves nothing there, so the student would get no page and no reason for
their 0. :func:`write_notice` puts a notebook there instead: one cell that says what was wrong with the file that was
handed in and what to do. ``generate_feedback`` then makes its page like any other (the gradebook holds the 0), and
a later grade of a readable resubmission replaces it.
"""

import uuid
from pathlib import Path

from autograder.engine import notebooks

NOTICE = "unreadable_submission"    # the cell's metadata key, for the tests and for anyone reading the notebook


def notice_text(assignment, notebook, problems):
    reasons = "".join(f"\n- {problem}" for problem in problems) or "\n- the file could not be read"
    return (f"## Your submission could not be graded\n\n"
            f"The file you handed in for **{assignment}**, `{notebook}`, is not a notebook that can be read, so "
            f"none of its code was run and every item scored 0:\n{reasons}\n\n"
            f"**What to do:** open your notebook in JupyterLab and save it again (File > Save Notebook), or start "
            f"from the notebook you were given; check the saved file with "
            f"`python -m autograder check {assignment} {notebook}`, then resubmit it (and tell your instructor "
            f"if the deadline has passed).")


def write_notice(course, student, assignment, notebook, problems):
    """Write ``autograded/<student>/<assignment>/<notebook>``: the notice alone (returns its path)."""
    cell = {"cell_type": "markdown", "id": uuid.uuid4().hex[:8], "metadata": {NOTICE: True},
            "source": notice_text(assignment, notebook, problems)}
    path = Path(course) / "autograded" / student / assignment / notebook
    path.parent.mkdir(parents=True, exist_ok=True)
    # written as plain JSON (nbformat 4.5): the module is imported wherever grading runs, Gradescope's bundle too,
    # which carries no nbformat
    notebooks.write({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, path)
    return path
