"""What the page should show, computed here: the notebook's own test cells run on the same answers."""

import contextlib
import io

from autograder.commands.check import exec_source
from autograder.engine import notebooks
from tests.proving import ROOT


def release(topic):
    return notebooks.read(ROOT / "release" / topic / f"{topic}.ipynb")


def answers(topic):
    """``{grade_id: solution text}`` from the source notebook: what a perfect student types."""
    return notebooks.solution_sources(notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb"))


def fill(nb, answers):
    """``nb`` with the solution cells named in ``answers`` replaced (in place; returns ``nb``)."""
    for cell in nb["cells"]:
        if notebooks.is_solution(cell) and notebooks.grade_id(cell) in answers:
            cell["source"] = answers[notebooks.grade_id(cell)]
    return nb


def check_messages(topic, answers):
    """``{grade_id: message}`` for each visible test cell of the release notebook that fails on ``answers``.

    The solution cells run as one module, then each test cell's own text runs in it, as in the
    student's kernel; the message is the ``AssertionError``'s text the student would read.
    """
    nb = fill(release(topic), answers)
    solution = "\n\n".join(notebooks.source_text(c) for c in nb["cells"]
                           if c.get("cell_type") == "code" and notebooks.is_solution(c))
    with contextlib.redirect_stdout(io.StringIO()):
        namespace = exec_source(solution, f"<{topic} answers>")
    failed = {}
    for cell in nb["cells"]:
        if notebooks.is_graded_test(cell):
            try:
                with contextlib.redirect_stdout(io.StringIO()):
                    exec(notebooks.source_text(cell), namespace)  # noqa: S102 - the course's own test cell
            except AssertionError as error:
                failed[notebooks.grade_id(cell)] = str(error)
    return failed


def flat(text):
    """Whitespace-insensitive text, to find a message inside a page's rendering of it."""
    return " ".join(text.split())
