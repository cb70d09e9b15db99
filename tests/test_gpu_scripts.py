"""scripts/validate-gpu.sh and scripts/gpu-wheelhouse.sh on a machine without a GPU: the validation says so in one
line and exits 0; the wheelhouse's set is what grading imports and no more (autograder/course/wheelhouse.py)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.course import wheelhouse

ROOT = Path(__file__).resolve().parents[1]
NOT_FOR_GRADING = {"jupyterlab", "notebook", "jupyterlab-server", "jupyterhub", "playwright", "psycopg",
                   "psycopg-binary", "matplotlib", "torch"}


@pytest.mark.quick
def test_both_scripts_parse():
    for script in ("validate-gpu.sh", "gpu-wheelhouse.sh"):
        done = subprocess.run(["bash", "-n", str(ROOT / "scripts" / script)], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


@pytest.mark.quick
@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has nvidia-smi: see -m gpu")
def test_validate_gpu_without_a_gpu_says_so_and_exits_0(tmp_path):
    done = subprocess.run(["bash", "scripts/validate-gpu.sh", "--report", str(tmp_path / "report.md")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "validate-gpu: no NVIDIA GPU on this machine (nvidia-smi finds none): nothing to validate."], done.stdout
    assert not done.stderr and not (tmp_path / "report.md").exists()


def _package(name, requires=(), extras=()):
    return {"name": name, "version": "1.0", "requires": list(requires), "extras": list(extras)}


@pytest.mark.quick
def test_prune_drops_what_only_a_pruned_package_needs():
    """nbgrader requires JupyterLab (its web pages): JupyterLab goes, and with it what only it needs; what grading
    needs through another path stays; a dependency of an extra nobody asked for is not followed."""
    resolved = [
        _package("nbgrader", ["jupyterlab>=4", "sqlalchemy<3", "jinja2", "pytest; extra == 'tests'"]),
        _package("jupyterlab", ["jupyter-lsp>=2", "jinja2>=3", "async-lru"]),
        _package("jupyter-lsp"), _package("async-lru"), _package("jinja2", ["markupsafe>=2"]),
        _package("markupsafe"), _package("sqlalchemy", ["greenlet; python_version < '3.14'"]), _package("greenlet"),
        _package("dask", ["distributed==2026.1; extra == 'distributed'"], extras=["distributed"]),
        _package("distributed", ["tornado"]), _package("tornado"), _package("pytest"),
        _package("nbconvert", ["bleach[css]!=5.0.0"]), _package("bleach", ["tinycss2<1.5,>=1.1.0; extra == 'css'"]),
        _package("tinycss2"),
    ]
    kept = {package["name"] for package in wheelhouse.prune(resolved, ["nbgrader>=0.9", "dask[distributed]"])}
    assert kept == {"nbgrader", "sqlalchemy", "greenlet", "jinja2", "markupsafe", "dask", "distributed", "tornado"}
    kept = {package["name"] for package in wheelhouse.prune(resolved, ["nbconvert"])}
    assert kept == {"nbconvert", "bleach", "tinycss2"}           # bleach's extra css, asked for by nbconvert


@pytest.mark.quick
def test_what_the_gpu_machine_has_is_left_out():
    have = wheelhouse.already_there("numpy==2.4.6\nopencv_python_headless==4.12.0.88\ntorch @ file:///x.whl\n"
                                    "# a comment\n-e git+https://example/x#egg=y\n")
    assert have == {"numpy", "opencv-python-headless", "torch"}


@pytest.mark.e2e
def test_the_gpu_set_for_python_3_12_is_grading_only():
    """Resolved by pip for CPython 3.12 on x86_64 Linux from the package index (nothing is downloaded): nbgrader and
    its runner, Dask, NumPy, OpenCV headless and pytest; nothing of JupyterLab, JupyterHub, Playwright, psycopg,
    matplotlib or torch."""
    done = subprocess.run([sys.executable, "-m", "autograder.course.wheelhouse", "--python", "3.12", "--list"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    names = {line.split("==")[0] for line in done.stdout.split()}
    assert {"nbgrader", "nbconvert", "nbclient", "sqlalchemy", "dask", "distributed", "numpy",
            "opencv-python-headless", "ipython", "pytest", "pytest-xdist", "hypothesis"} <= names
    assert not names & NOT_FOR_GRADING, names & NOT_FOR_GRADING
    assert len(names) < 120     # most of it nbgrader's own requirements (jupyter-server and its tree)
