"""The student kit in a fresh venv, without the course repository: a release notebook runs in a real Jupyter kernel
(its test cells say "not implemented" as released, and pass with the reference answers pasted into the solution
cells), and ``python -m autograder check`` grades it there."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from autograder.engine import notebooks

ROOT = Path(__file__).resolve().parents[2]
TOPIC = "operators"   # its masked_mean oracle is grader-only: the kit answers from its expected outputs
WHERE = "import sys, autograder; print('KIT', sys.executable, autograder.__file__)"

pytestmark = pytest.mark.e2e


def _clean_env(venv):
    env = {name: value for name, value in os.environ.items()
           if name not in ("PYTHONPATH", "VIRTUAL_ENV", "AUTOGRADER_SETTINGS", "JUPYTER_PATH", "JUPYTER_CONFIG_DIR")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def _answered(nb, topic):
    """``nb`` with every solution cell holding the reference answer from ``source/`` (markers removed)."""
    answers = notebooks.solution_sources(notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb"))
    for cell in nb["cells"]:
        if notebooks.is_solution(cell):
            cell["source"] = answers[notebooks.grade_id(cell)]
    return nb


def _run_in_kernel(venv, nb, workdir, name):
    """Execute ``nb`` (with a first cell that says which Python and which autograder it runs) in the kit venv's
    own kernel; return the executed notebook."""
    nb = json.loads(json.dumps(nb))
    nb["cells"].insert(0, notebooks.code("where", WHERE))
    path = workdir / f"{name}.ipynb"
    notebooks.write(nb, path)
    done = subprocess.run([str(venv / "bin" / "jupyter"), "nbconvert", "--to", "notebook", "--execute",
                           "--allow-errors", "--ExecutePreprocessor.timeout=300", "--output", f"{name}-run.ipynb",
                           str(path)], cwd=workdir, env=_clean_env(venv), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return notebooks.read(workdir / f"{name}-run.ipynb")


def _errors_of_test_cells(nb):
    """``{grade id: error text}`` for every graded test cell, "" where it raised nothing."""
    found = {}
    for cell in nb["cells"]:
        if notebooks.is_graded_test(cell):
            errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            found[notebooks.grade_id(cell)] = "\n".join(f"{o['ename']}: {o['evalue']}" for o in errors)
    return found


def _where(nb):
    text = "".join("".join(o.get("text", "")) for o in nb["cells"][0]["outputs"])
    assert text.startswith("KIT "), nb["cells"][0]["outputs"]
    return text.split()[1:3]


def test_a_release_notebook_runs_on_the_kit_alone(kit_venv, kit_wheel, tmp_path):
    released = notebooks.read(kit_wheel.parent / "release" / TOPIC / f"{TOPIC}.ipynb")
    assert released == notebooks.read(ROOT / "release" / TOPIC / f"{TOPIC}.ipynb")   # the kit's copy of release/

    as_released = _run_in_kernel(kit_venv, released, tmp_path, "released")
    executable, package = _where(as_released)
    assert Path(executable).parent == kit_venv / "bin"   # the kit venv's own kernel
    assert package.startswith(str(kit_venv / "lib")) and not package.startswith(str(ROOT))
    before = _errors_of_test_cells(as_released)
    assert sorted(before) == sorted(notebooks.graded_test_ids(released)) and len(before) == 5
    for grade_id, error in before.items():
        assert error.startswith("CheckFailure: [check_") and "is not implemented yet" in error, (grade_id, error)

    answered = _run_in_kernel(kit_venv, _answered(released, TOPIC), tmp_path, "answered")
    assert _errors_of_test_cells(answered) == {grade_id: "" for grade_id in before}


def test_check_grades_in_the_kit_venv(kit_venv, kit_wheel, tmp_path):
    released = kit_wheel.parent / "release" / TOPIC / f"{TOPIC}.ipynb"
    answered = tmp_path / "answered.ipynb"
    notebooks.write(_answered(notebooks.read(released), TOPIC), answered)
    python, env = str(kit_venv / "bin" / "python"), _clean_env(kit_venv)

    def check(path):
        done = subprocess.run([python, "-m", "autograder", "check", TOPIC, str(path), "--json"], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=600)
        return done.returncode, json.loads(done.stdout)

    code, before = check(released)
    assert code == 1 and before["score"] == 0 and before["hidden"] is False
    assert all("is not implemented yet" in item["message"] for item in before["items"])
    code, after = check(answered)
    assert code == 0 and after["score"] == after["max_score"] == 9, after

    done = subprocess.run([python, "-m", "autograder", "grade"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "an instructor's tool that the student kit does not hold" in done.stderr
