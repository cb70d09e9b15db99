"""release/ and solutions/ are what source/ builds, and release notebooks give nothing away."""

import re
import subprocess
import sys

import pytest

from autograder.course import notebooks
from autograder.course.build import differences, topics
from tests.proving import ROOT, reference

TOPICS = topics(ROOT)


def test_every_topic_has_its_files():
    assert "stability" in TOPICS
    for topic in TOPICS:
        for path in (f"release/{topic}/{topic}.ipynb", f"solutions/{topic}.py", f"autograder/checks/{topic}.py",
                     f"tests/checks/test_{topic}.py", f"tests/mutants/{topic}.py",
                     f"tests/alternatives/{topic}.py", f"tests/demo_submissions/{topic}.py"):
            assert (ROOT / path).exists(), path


def test_committed_release_and_solutions_match_source():
    assert differences(ROOT) == []


def _solution_lines(topic):
    """The non-trivial lines between the solution markers of the source notebook."""
    nb = notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb")
    found = set()
    for cell in nb["cells"]:
        if not notebooks.is_solution(cell):
            continue
        for block in re.findall(r"### BEGIN SOLUTION(.*?)### END SOLUTION", notebooks.source_text(cell), flags=re.S):
            found |= {line.strip() for line in block.splitlines()
                      if len(line.strip()) > 12 and not line.strip().startswith(("#", "return", '"""', "pass"))}
    return found


@pytest.mark.parametrize("topic", TOPICS)
def test_release_contains_no_solution_and_no_hidden_test(topic):
    text = (ROOT / "release" / topic / f"{topic}.ipynb").read_text(encoding="utf-8")
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert marker not in text
    nb = notebooks.read(ROOT / "release" / topic / f"{topic}.ipynb")
    released = {line.strip() for c in nb["cells"] if notebooks.is_solution(c) or notebooks.is_graded_test(c)
                for line in notebooks.source_text(c).splitlines()}
    leaked = _solution_lines(topic) & released
    assert not leaked, f"solution lines in release/{topic}: {sorted(leaked)[:5]}"
    source = notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb")
    hidden = [c for c in source["cells"] if "BEGIN HIDDEN TESTS" in notebooks.source_text(c)]
    assert hidden, f"{topic} has no hidden tests"


@pytest.mark.parametrize("topic", TOPICS)
def test_every_solution_cell_stub_raises_and_every_test_cell_calls_a_check(topic):
    nb = notebooks.read(ROOT / "release" / topic / f"{topic}.ipynb")
    stubs = [notebooks.source_text(c) for c in nb["cells"] if notebooks.is_solution(c)]
    assert stubs and all("raise NotImplementedError()" in s for s in stubs)
    tests = [notebooks.source_text(c) for c in nb["cells"] if notebooks.is_graded_test(c)]
    assert tests and all(f"from autograder.checks.{topic} import check_" in t for t in tests)


@pytest.mark.parametrize("topic", TOPICS)
def test_solutions_module_defines_what_the_checks_grade(topic):
    from autograder.results import checks_of, target_names
    namespace = reference(topic)
    for check in checks_of(topic):
        assert all(name in namespace for name in target_names(check)), check.__name__


def test_checks_import_without_nbgrader_or_jupyter():
    """The lent GPU machines have torch but no nbgrader: the checks and the plain-script runner must import."""
    code = ("import sys\n"
            "for blocked in ('nbgrader', 'jupyter_client', 'nbformat', 'nbconvert', 'IPython'):\n"
            "    sys.modules[blocked] = None\n"
            "import importlib, pkgutil, autograder.checks, autograder.selfcheck\n"
            "for m in pkgutil.iter_modules(autograder.checks.__path__):\n"
            "    importlib.import_module('autograder.checks.' + m.name)\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_plain_script_check_grades_a_file():
    out = subprocess.run([sys.executable, "-m", "autograder", "check", "stability", "solutions/stability.py"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "PASS  check_softmax_forward" in out.stdout
    out = subprocess.run([sys.executable, "-m", "autograder", "check", "stability",
                          "release/stability/stability.ipynb", "--json"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 1
    assert '"passed": false' in out.stdout and '"passed": true' not in out.stdout


@pytest.mark.parametrize("topic", TOPICS)
def test_test_cells_call_exactly_the_topics_checks(topic):
    """Every graded check has a test cell and every test cell calls a graded check (what `check` and the
    kit's tests run is what nbgrader grades)."""
    from autograder.results import checks_of
    nb = notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb")
    called = {name for c in nb["cells"] if notebooks.is_graded_test(c)
              for name in re.findall(r"^(check_\w+)\(", notebooks.source_text(c), flags=re.M)}
    assert called == {c.__name__ for c in checks_of(topic)}
