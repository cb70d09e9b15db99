"""pyproject.toml's core dependencies are what grading needs; the tools' and the tests' packages are extras, and a
command that needs a missing one says which extra to install, in one line."""

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from autograder.cli import EXTRAS
from autograder.engine.records import RecordStore, new_record

pytestmark = pytest.mark.quick

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
NOT_FOR_GRADING = {"jupyterhub", "playwright", "psycopg", "pytest", "pytest-xdist", "hypothesis", "matplotlib"}


def _name(requirement):
    return re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0].lower()


def test_the_core_set_is_what_grading_needs_and_the_rest_are_extras():
    core = {_name(r) for r in PROJECT["dependencies"]}
    assert {"torch", "numpy", "opencv-python-headless", "nbgrader", "dask"} <= core
    assert not core & NOT_FOR_GRADING
    extras = PROJECT["optional-dependencies"]
    for module, extra in EXTRAS.items():
        assert module in {_name(r) for r in extras[extra]} | {_name(r) for r in extras["test"]}, (module, extra)
    assert "effective-pytorch-lab[analysis,postgres,hub]" in extras["test"]


def test_a_command_without_its_extra_says_which_to_install(tmp_path):
    """Without matplotlib (the extra ``analysis``), ``analysis`` writes its pages without pictures and says which
    extra brings them, in one line; a module of an extra missing elsewhere ends the command with the same line."""
    RecordStore(tmp_path).append(new_record("ada", "basics", seed=1, graded_by="test", items=[
        {"item": "grad_of", "check": "check_grad_of", "status": "passed", "score": 1.0, "max_score": 1.0,
         "message": ""}]))
    blocked = "import sys; sys.modules['matplotlib'] = None\n"      # as where the extra is not installed
    # the pages themselves (the command refuses a folder without the course's gradebook before it gets here)
    program = blocked + ("from autograder.commands.analysis import write_pages\n"
                         f"write_pages({str(tmp_path)!r}, ['basics'])")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "  The pictures left out: matplotlib is not installed: pip install -e '.[analysis]'" in \
        done.stdout.splitlines()
    page = (tmp_path / "after-grading" / "analysis-basics.html").read_text(encoding="utf-8")
    assert "<img" not in page and "pip install -e '.[analysis]'" in page
    shutil.copytree(ROOT / "source" / "basics", tmp_path / "source" / "basics")   # a course of one assignment
    (tmp_path / "nbgrader_config.py").write_text("", encoding="utf-8")
    settings = tmp_path / "settings.json"      # a PostgreSQL gradebook, without its driver
    settings.write_text('{"grading": {"db_url": "postgresql+psycopg://grader@127.0.0.1:9/gradebook"}}')
    program = ("import sys; sys.modules['psycopg'] = None\n"
               "from autograder.cli import main\n"
               f"sys.exit(main(['--course', {str(tmp_path)!r}, 'export', 'basics', '--csv', "
               f"{str(tmp_path / 'grades.csv')!r}]))")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "AUTOGRADER_SETTINGS": str(settings)})
    said = [line for line in done.stderr.strip().splitlines() if not line.startswith("autograder: settings from ")]
    assert done.returncode == 2 and said == [
        "`python -m autograder export` needs psycopg, which is not installed: pip install -e '.[postgres]'"], \
        done.stderr
    assert not (tmp_path / "grades.csv").exists()
