"""What ``nbgrader generate_feedback`` gives students, through the course's configuration: a page for a notebook
that could not be read (why, and what to do), no configuration warnings, an unchanged answer cell said in words
(and nothing said under a written one), the contents naming each item by its check, and a student's raised error
shown once."""

import re

import pytest

from autograder.commands.build import nbgrader, scratch_course
from autograder.commands.grade import grade_all
from autograder.course.unreadable_feedback import NOTICE
from autograder.engine import notebooks
from autograder.nbgrader_plugins.execute import split_traceback
from tests.proving import ROOT, hand_in, submission

TOPIC = "stability"


@pytest.fixture(scope="module")
def feedback(tmp_path_factory):
    """``dave`` handed in a file that is not JSON, ``erin`` the notebook as released, ``frank`` the reference
    answers: graded, then ``generate_feedback`` for all three; ``(course, its output)``."""
    course = scratch_course(ROOT, tmp_path_factory.mktemp("course"), with_release=True)
    for student in ("dave", "erin", "frank"):
        (course / "submitted" / student / TOPIC).mkdir(parents=True)
    (course / "submitted" / "dave" / TOPIC / f"{TOPIC}.ipynb").write_text('{"cells": [{"source": "oops',
                                                                           encoding="utf-8")
    notebooks.write(notebooks.read(course / "release" / TOPIC / f"{TOPIC}.ipynb"),
                    course / "submitted" / "erin" / TOPIC / f"{TOPIC}.ipynb")
    hand_in(course, "frank", TOPIC, submission(TOPIC, course=course))
    results = {r.student: r for r in grade_all(course, [TOPIC], ["dave", "erin", "frank"], progress=None,
                                               workers=0)}
    assert results["dave"].status == "error" and results["erin"].status == results["frank"].status == "graded"
    done = nbgrader(course, "generate_feedback", TOPIC, "--force")
    return course, done.stdout + done.stderr


def page(course, student):
    return (course / "feedback" / student / TOPIC / f"{TOPIC}.ipynb").with_suffix(".html").read_text(encoding="utf-8")


@pytest.mark.e2e
def test_a_student_whose_notebook_cannot_be_read_gets_a_page_saying_why_and_what_to_do(feedback):
    course, _ = feedback
    notice = notebooks.read(course / "autograded" / "dave" / TOPIC / f"{TOPIC}.ipynb")["cells"]
    assert len(notice) == 1 and notice[0]["metadata"][NOTICE]
    text = page(course, "dave")
    assert "Your submission could not be graded" in text and "not valid notebook JSON" in text
    assert "save it again" in text and "then resubmit it" in text
    assert "(Score: 0.0 / 29.0)" in text


@pytest.mark.e2e
def test_no_configuration_warning_and_each_page_written(feedback):
    course, out = feedback
    assert "not recognized" not in out and "No notebooks were matched" not in out, out
    assert {p.parent.parent.name for p in (course / "feedback").glob(f"*/{TOPIC}/{TOPIC}.html")} == {
        "dave", "erin", "frank"}


@pytest.mark.e2e
def test_an_answer_cell_left_as_handed_out_is_said_in_words(feedback):
    text = page(feedback[0], "erin")
    assert "No response." not in text
    assert text.count("This answer cell is as it was handed out: no answer was written in it.") == 3


@pytest.mark.e2e
def test_full_answers_get_a_page_with_no_comment_on_their_cells(feedback):
    text = page(feedback[0], "frank")
    assert "(Score: 29.0 / 29.0)" in text
    assert "No response." not in text and "as it was handed out" not in text and "Comments:" not in text


@pytest.mark.e2e
def test_the_contents_name_each_item_by_its_check(feedback):
    from autograder.checks import items_of

    for student in ("erin", "frank"):
        text = page(feedback[0], student)
        assert ">Test cell<" not in text
        for item in items_of(TOPIC):
            assert f'<a href="#{item.cell_id}">{item.name}</a>' in text, (student, item.id)


@pytest.mark.e2e
def test_a_raised_error_is_shown_once(feedback):
    course, _ = feedback
    graded = notebooks.read(course / "autograded" / "erin" / TOPIC / f"{TOPIC}.ipynb")
    raised = [c["outputs"] for c in graded["cells"] if any(o["output_type"] == "error" for o in c.get("outputs", []))]
    assert raised
    for outputs in raised:
        printed = "".join(o.get("text", "") if isinstance(o.get("text", ""), str) else "".join(o["text"])
                          for o in outputs if o["output_type"] == "stream")
        assert "NotImplementedError" not in printed and "Traceback" not in printed, outputs


TRACEBACK = ("\x1b[31m---------------------------------------------------------------------------\x1b[39m\n"
             "\x1b[31mNotImplementedError\x1b[39m                       Traceback (most recent call last)\n"
             "Cell In[1], line 1\n----> 1 f()\n\n\x1b[31mNotImplementedError\x1b[39m: \n")


@pytest.mark.quick
def test_split_traceback_moves_the_printed_traceback_into_the_error():
    printed, lines = split_traceback("hello\n" + TRACEBACK, "NotImplementedError: ")
    assert printed == "hello\n" and len(lines) == 6 and "Traceback" in lines[1] and lines[-1].endswith(": ")
    # output that does not end with this error's traceback is kept whole, and the error keeps its one line
    assert split_traceback("hello\n" + TRACEBACK, "ValueError: bad") == ("hello\n" + TRACEBACK, [])
    assert split_traceback("NotImplementedError: \n", "NotImplementedError: ") == ("NotImplementedError: \n", [])
    assert split_traceback("", "KeyError: 'x'") == ("", [])
    assert re.search("Traceback", "".join(split_traceback(TRACEBACK, "NotImplementedError:")[1]))
