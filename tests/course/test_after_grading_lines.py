"""What a person reads after grading: every path the demo prints is where the page stays; ``similarity`` names the
page it wrote, not itself; the analysis pages say their points are before any late penalty; one is "1 pair"."""

import re
import shutil

import pytest

from autograder.cli import main
from autograder.commands.analysis import BEFORE_LATE, assignment_page, course_page
from autograder.commands.build import scratch_course
from autograder.commands.demo import _fill, show_after_grading
from autograder.course.analysis import analyse
from autograder.course.progress import counted
from autograder.engine import notebooks
from tests.proving import ROOT

TOPIC = "stability"


@pytest.fixture
def copied(tmp_path):
    """A course where ann and bob handed in the reference answers: one pair at 1.00."""
    work = scratch_course(ROOT, tmp_path / "course", with_release=True)
    release_nb = notebooks.read(work / "release" / TOPIC / f"{TOPIC}.ipynb")
    answers = notebooks.solution_sources(notebooks.read(work / "source" / TOPIC / f"{TOPIC}.ipynb"))
    for student in ("ann", "bob"):
        (work / "submitted" / student / TOPIC).mkdir(parents=True)
        notebooks.write(_fill(release_nb, answers), work / "submitted" / student / TOPIC / f"{TOPIC}.ipynb")
    return work


@pytest.mark.quick
def test_every_page_the_demo_names_outlives_its_temporary_course(copied):
    lines = []
    pages = show_after_grading(copied, [TOPIC], keep=None, progress=lambda line, **_: lines.append(line))
    shutil.rmtree(copied)                       # as run_demo does at the end
    text = "\n".join(lines)
    named = re.findall(r"(/\S+\.html)", text)
    assert named and all(not path.startswith(str(copied)) for path in named), text
    assert f"side by side in {pages / 'similarity-stability.html'}" in text
    assert (pages / "similarity-stability.html").exists()      # (analysis.html needs records: this course has none)
    assert f"The pages: {pages / 'analysis.html'}" in text
    shutil.rmtree(pages.parent)


@pytest.mark.quick
def test_similarity_names_the_page_it_wrote_not_itself(copied, capsys):
    assert main(["--course", str(copied), "similarity", TOPIC]) == 0
    out = capsys.readouterr().out
    assert "stability: 3 pairs at or above" in out or "pair at or above" in out
    assert "python -m autograder similarity" not in out
    assert f"side by side in {copied / 'after-grading' / 'similarity-stability.html'}" in out


@pytest.mark.quick
def test_counts_are_singular_for_one():
    assert [counted(n, "submission") for n in (0, 1, 2)] == ["0 submissions", "1 submission", "2 submissions"]
    assert counted(1, "notebook") == "1 notebook" and counted(3, "analysis", "analyses") == "3 analyses"


@pytest.mark.quick
def test_the_analysis_pages_say_their_points_are_before_the_late_penalty():
    record = {"status": "graded", "items": [{"item": "a", "check": "check_a", "max_score": 2, "score": 2,
                                             "status": "passed"}]}
    stats = analyse(TOPIC, [record, dict(record)])
    assert BEFORE_LATE in assignment_page(stats, ["p.png", "r.png"])
    page = course_page([stats])
    assert "mean points before any late penalty" in page and BEFORE_LATE in page


@pytest.mark.quick
def test_a_pair_at_one_says_why_its_sides_have_different_lines_marked():
    """A copy with statements added: every statement of the original is in the copy (1.00), not the other way round;
    the page gives both shares and says what the unmarked lines are; a wrong share (the larger for both) is not."""
    from autograder.commands.similarity import shares_text
    from autograder.course.fingerprints import normalised_tokens, statement_index, statement_shares
    from autograder.course.similarity import Pair

    original = "def f(x):\n    y = x.exp()\n    return y / y.sum()\n"
    padded = "def f(x):\n    unused = 3\n    y = x.exp()\n    z = y * 2\n    return y / y.sum()\n"
    a, b = (statement_index(normalised_tokens(text)) for text in (original, padded))
    share_a, share_b = statement_shares(a, b)
    assert share_a == 1.0 and 0.5 < share_b < 1.0
    text = shares_text(Pair("ann", "bob", 1.0, 1.0, [0, 1, 2], [0, 2, 4], share_a, share_b))
    assert "ann: 1.00 of their statements are in bob's code; bob: 0." in text
    assert "The lines of bob that are not marked are code the other side does not have." in text
    assert "not marked" not in shares_text(Pair("ann", "bob", 1.0, 1.0, [0], [0], 1.0, 1.0))


@pytest.mark.quick
def test_the_similarity_page_gives_each_sides_share(copied):
    assert main(["--course", str(copied), "similarity", TOPIC]) == 0
    page = (copied / "after-grading" / "similarity-stability.html").read_text(encoding="utf-8")
    assert "ann: 1.00 of their statements are in bob's code; bob: 1.00 of theirs are in ann's." in page
    assert "The lines of reference solution that are not marked are code the other side does not have." in page
