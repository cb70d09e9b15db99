"""A person's mistake on the command line is one line saying what to do, and exit status 2: never a traceback.

Each case runs the real command line (``autograder.cli.main``) in the repository, as an instructor or a
student would type it; one case runs ``python -m autograder`` as a process, to see the whole path.
"""

import subprocess
import sys

import pytest

from autograder.checks import TOPICS
from autograder.cli import main
from tests.proving import ROOT

pytestmark = pytest.mark.quick


def one_line_error(capsys, argv, course=ROOT):
    """``main(argv)`` in ``course``: its exit status is 2 and its stderr one line, which is returned."""
    status = main(["--course", str(course), *argv])
    err = capsys.readouterr().err
    assert status == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize("argv", [
    ["grade", "stabilty"],
    ["export", "stabilty", "--csv", "grades.csv"],
    ["check", "stabilty", "release/stability/stability.ipynb"],
    ["settings", "stabilty"],
    ["gradescope", "stabilty"],
    ["similarity", "stabilty"],
    ["analysis", "stabilty"],
    ["grade", "stability", "stabilty"],
    ["demo", "stabilty"],
])
def test_an_unknown_assignment_is_named_with_the_closest_and_every_known_one(capsys, argv):
    line = one_line_error(capsys, argv)
    assert "no assignment 'stabilty' (did you mean stability?)" in line
    assert line.endswith("the assignments are: " + ", ".join(TOPICS))


def test_a_name_nothing_is_close_to_lists_the_assignments_without_a_guess(capsys):
    line = one_line_error(capsys, ["check", "../etc", "release/stability/stability.ipynb"])
    assert "no assignment '../etc'; the assignments are: basics" in line


def test_known_assignments_pass_the_check(capsys):
    assert main(["--course", str(ROOT), "settings", "stability", "amp"]) == 0
    assert '"stability"' in capsys.readouterr().out


def test_check_of_a_notebook_that_does_not_exist(capsys, tmp_path):
    line = one_line_error(capsys, ["check", "stability", str(tmp_path / "stability.ipynb")])
    assert line == (f"Cannot check: {tmp_path / 'stability.ipynb'} does not exist: give the path of your notebook "
                    "(.ipynb) or of a Python file")
    assert "is a folder" in one_line_error(capsys, ["check", "stability", str(tmp_path)])


@pytest.mark.parametrize("text, says", [
    ('{"cells": [{"cell_type": "code", "source": "oops', "not valid notebook JSON"),
    ("[1, 2]", "JSON, but not a notebook"),
    (b"\xff\xfe", "not valid notebook JSON"),
])
def test_check_of_a_notebook_that_is_not_one(capsys, tmp_path, text, says):
    path = tmp_path / "stability.ipynb"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    line = one_line_error(capsys, ["check", "stability", str(path)])
    assert line.startswith(f"Cannot check: {path} cannot be read as a notebook: {says}")
    assert line.endswith("Open it in JupyterLab and save it again (File > Save Notebook), or start again from the "
                         "notebook you were given")


@pytest.mark.parametrize("command", [["demo"], ["grade"], ["export", "--csv", "x.csv"], ["pending"], ["similarity"]])
def test_a_course_command_outside_the_course_says_where_to_run_it(capsys, tmp_path, command):
    line = one_line_error(capsys, command, course=tmp_path)
    assert line.endswith(f"{tmp_path} is not the course directory (it has no source/ and nbgrader_config.py): run "
                         "the command in the course's repository root, or give it with --course DIR before the command")


def test_the_command_line_as_a_process_prints_one_line_and_exits_2(tmp_path):
    """``python -m autograder demo`` started in a folder that is not the course, as a person would."""
    run = subprocess.run([sys.executable, "-m", "autograder", "demo"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    assert run.stderr == ("Cannot demo: this directory is not the course directory (it has no source/ and "
                          "nbgrader_config.py): run the command in the course's repository root, or give it with "
                          "--course DIR before the command\n")
    assert run.stdout == ""
