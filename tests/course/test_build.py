"""release/ and solutions/ are what source/ builds, and release notebooks give nothing away."""

import json
import re
import subprocess
import sys

import pytest

from autograder.checks import items_of, max_points
from autograder.commands.build import apply_spec, differences, item_cell_source, topics
from autograder.engine import notebooks
from tests.proving import ROOT, reference, without_hidden_variants

TOPICS = topics(ROOT)


def topic_files():
    """The files every topic must have, as docs/authoring.md lists them (``<topic>`` stands for the name)."""
    text = (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
    table = re.search(r"<!-- topic-files -->(.*?)<!-- /topic-files -->", text, flags=re.S).group(1)
    return re.findall(r"\| `([^`]*<topic>[^`]*)` \|", table)


def test_every_topic_has_the_files_the_authoring_guide_lists():
    files = topic_files()
    assert len(files) == 9 and "autograder/checks/<topic>/contract.py" in files
    assert "stability" in TOPICS
    for topic in TOPICS:
        for path in files:
            assert (ROOT / path.replace("<topic>", topic)).exists(), path.replace("<topic>", topic)


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
    namespace = reference(topic)
    for item in items_of(topic):
        assert all(name in namespace for name in item.targets), item.id


def test_checks_import_without_nbgrader_or_jupyter():
    """The lent GPU machines have torch but no nbgrader: the checks and the plain-script runner must import."""
    code = ("import sys\n"
            "for blocked in ('nbgrader', 'jupyter_client', 'nbformat', 'nbconvert', 'IPython'):\n"
            "    sys.modules[blocked] = None\n"
            "import importlib, pkgutil, autograder.checks, autograder.commands.check\n"
            "for m in pkgutil.iter_modules(autograder.checks.__path__):\n"
            "    importlib.import_module('autograder.checks.' + m.name)\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr


def test_plain_script_check_grades_a_file_with_points_and_hidden_variants():
    out = subprocess.run([sys.executable, "-m", "autograder", "check", "stability", "solutions/stability.py",
                          "--seed", "5"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    full, count = max_points("stability"), len(items_of("stability"))
    assert "PASS  3/3  softmax_forward" in out.stdout
    assert out.stdout.rstrip().endswith(f"{full:g}/{full:g} points ({count} passed, 0 failed, 0 pending)")
    assert "hidden-test seed 5" in out.stdout
    out = subprocess.run([sys.executable, "-m", "autograder", "check", "stability",
                          "release/stability/stability.ipynb", "--json"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 1
    data = json.loads(out.stdout)   # nothing but JSON
    assert data["score"] == 0 and data["max_score"] == max_points("stability") and {i["status"] for i in data["items"]} == {"failed"}


def test_check_json_is_nothing_but_json_even_when_the_notebook_prints():
    """amp's source notebook prints from its example cells; the JSON still parses, the prints go to stderr."""
    out = subprocess.run([sys.executable, "-m", "autograder", "check", "amp", "source/amp/amp.ipynb", "--json"],
                         cwd=ROOT, capture_output=True, text=True)
    data = json.loads(out.stdout)
    assert out.returncode == 0 and data["pending"] == ["speed"] and data["score"] == data["max_score"] - 2
    assert out.stderr.strip()   # what the cells printed


@pytest.mark.parametrize("topic", TOPICS)
def test_test_cells_are_written_from_the_spec(topic):
    """Every graded item has a test cell, and each cell's text and points are what the spec writes: what `check`
    and the kit's tests run is what nbgrader grades."""
    nb = notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb")
    cells = {notebooks.grade_id(c): c for c in nb["cells"] if notebooks.is_graded_test(c)}
    assert set(cells) == {item.cell_id for item in items_of(topic)}
    for item in items_of(topic):
        assert notebooks.source_text(cells[item.cell_id]) == item_cell_source(item).rstrip("\n")
        assert cells[item.cell_id]["metadata"]["nbgrader"]["points"] == item.points


def test_deleting_a_hidden_variant_changes_the_notebook(monkeypatch):
    path = ROOT / "source" / "stability" / "stability.ipynb"
    before = {notebooks.grade_id(c): notebooks.source_text(c) for c in apply_spec(notebooks.read(path),
                                                                                 "stability")["cells"]}
    item = without_hidden_variants(monkeypatch, "stability", 0)
    after = {notebooks.grade_id(c): notebooks.source_text(c) for c in apply_spec(notebooks.read(path),
                                                                                "stability")["cells"]}
    assert "BEGIN HIDDEN TESTS" in before[item.cell_id] and "BEGIN HIDDEN TESTS" not in after[item.cell_id]
    assert {k: v for k, v in before.items() if k != item.cell_id} == {k: v for k, v in after.items()
                                                                      if k != item.cell_id}


@pytest.mark.parametrize("topic", TOPICS)
def test_run_all_goes_past_errors_in_the_release(topic):
    """Every code cell but the solutions carries JupyterLab's `raises-exception` tag: one Run All shows every
    check's verdict, an unfinished exercise stopping none."""
    nb = notebooks.read(ROOT / "release" / topic / f"{topic}.ipynb")
    for cell in nb["cells"]:
        if cell.get("cell_type") == "code":
            tagged = "raises-exception" in cell["metadata"].get("tags", [])
            assert tagged != notebooks.is_solution(cell), notebooks.grade_id(cell)



def test_a_new_gradebook_gets_the_schema_version_that_alembic_heads_gives(tmp_path, monkeypatch):
    """nbgrader's own ``get_alembic_version`` (an ``alembic heads`` subprocess, kept aside when the course's
    configuration replaced it) and ``gradebook_schema.schema_head`` (the same migration scripts read in this process)
    agree; a gradebook made once the course's configuration is loaded holds that version."""
    import os
    import sqlite3

    import nbgrader.api
    from nbgrader.api import Gradebook
    from traitlets.config.loader import PyFileConfigLoader

    from autograder.commands.build import scratch_course
    from autograder.nbgrader_plugins import gradebook_schema

    course = scratch_course(ROOT, tmp_path / "course")
    PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    assert nbgrader.api.get_alembic_version is gradebook_schema.schema_head
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    theirs = gradebook_schema.nbgraders_own()      # runs `alembic -c <nbgrader's alembic.ini> heads`
    assert re.fullmatch(r"[0-9a-f]{12}", theirs), theirs
    assert gradebook_schema.schema_head() == theirs
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}"):
        pass
    with sqlite3.connect(course / "gradebook.db") as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(theirs,)]
