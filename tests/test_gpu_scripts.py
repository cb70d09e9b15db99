"""scripts/validate-gpu.sh and scripts/gpu-wheelhouse.sh on a machine without a GPU: the validation says so in one
line and exits 0; the wheelhouse's set is what grading imports and no more (autograder/course/wheelhouse.py), under
60 MB but for OpenCV headless, and validate-gpu.sh's install from it resolves."""

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


@pytest.mark.quick
def test_the_size_is_measured_and_only_opencv_may_put_it_over_the_limit(tmp_path):
    for name, size in (("opencv-python-headless", 61_200_000), ("numpy", 16_900_000), ("six", 11_000)):
        (tmp_path / f"{name.replace('-', '_')}-1.0-py3-none-any.whl").write_bytes(b"\0" * size)
    packages = [{"name": name, "version": "1.0"} for name in ("opencv-python-headless", "numpy", "six")]
    measured = wheelhouse.sizes(tmp_path, packages)
    assert [name for name, _ in measured] == ["opencv-python-headless", "numpy", "six"]
    lines = wheelhouse.size_lines(measured)
    assert lines[0] == "3 wheels, 78.1 MB (opencv-python-headless 61.2 MB, numpy 16.9 MB, the rest smaller)"
    assert lines[1].startswith("over 60 MB only because of opencv-python-headless (61.2 MB: grading encodes")
    assert "the rest is 16.9 MB" in lines[1]
    assert wheelhouse.size_lines(measured[1:]) == ["2 wheels, 16.9 MB (numpy 16.9 MB, the rest smaller)"]


def _torch_alone(folder):
    """A folder of links to this interpreter's torch and what it requires that the wheelhouse does not hold (the GPU
    machine's own torch, which validate-gpu.sh's venv sees through --system-site-packages)."""
    import re
    from importlib import metadata

    from packaging.markers import Marker

    held = {wheelhouse.canonical(line.split("==")[0]) for line in (folder / "requirements.txt").read_text().split()}
    todo, seen = ["torch"], set()
    links = folder.parent / "torch-alone"
    links.mkdir()
    while todo:
        name = todo.pop()
        if name in seen or name in held:
            continue
        seen.add(name)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:      # a CUDA build's nvidia-* packages, absent from a CPU build
            continue
        for top in {Path(str(f)).parts[0] for f in dist.files or () if not str(f).startswith("..")}:
            target = links / top
            if not target.exists():
                target.symlink_to(dist.locate_file(top))
        for requirement in dist.requires or ():
            spec, _, marker = requirement.partition(";")
            if marker.strip() and not Marker(marker.strip()).evaluate({"extra": ""}):
                continue
            todo.append(wheelhouse.canonical(re.match(r"[A-Za-z0-9._-]+", spec).group(0)))
    return links


@pytest.mark.e2e
def test_the_gpu_wheelhouse_is_under_the_limit_but_for_opencv_and_validate_gpu_installs_from_it(tmp_path):
    """The wheelhouse for this Python (3.11 here; `--python 3.12` for the device), downloaded from the package index:
    under 60 MB but for OpenCV headless (measured: its wheel alone is over 60 MB), and validate-gpu.sh's install
    from it (--no-index --no-deps into a venv) resolves: with the interpreter's torch beside it, everything grading
    imports imports, and every requirement of the installed set is there but the ones pruned on purpose."""
    python = f"{sys.version_info[0]}.{sys.version_info[1]}"
    folder = tmp_path / "wheels"
    done = subprocess.run([sys.executable, "-m", "autograder.course.wheelhouse", "--python", python, "-o",
                           str(folder)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    pinned = [line for line in (folder / "requirements.txt").read_text().split() if line]
    packages = [{"name": line.split("==")[0], "version": line.split("==")[1]} for line in pinned]
    measured = dict(wheelhouse.sizes(folder, packages))
    assert len(measured) == len(packages), set(p["name"] for p in packages) - set(measured)
    beyond = sum(size for name, size in measured.items() if name not in wheelhouse.OVER_LIMIT)
    assert beyond < wheelhouse.LIMIT_MB * 1e6, wheelhouse.size_lines(wheelhouse.sizes(folder, packages))
    assert not set(measured) & NOT_FOR_GRADING
    assert f"wrote {len(packages)} wheels, " in done.stdout

    venv = tmp_path / "venv"       # as validate-gpu.sh installs them (there with the machine's site packages)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    installed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index", "--no-deps",
                                "--disable-pip-version-check", "--find-links", str(folder), "-r",
                                str(folder / "requirements.txt")], capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "machine-torch.pth").write_text(str(_torch_alone(folder)) + "\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)}
    imports = ("import torch, numpy, cv2, nbgrader, nbgrader.apps, nbconvert, nbclient, dask, distributed, pytest, "
               "xdist, hypothesis, IPython; import autograder.course.grading, autograder.commands.demo, "
               "autograder.engine.jobs, autograder.seam.worker; print('ok')")
    ran = subprocess.run([str(venv / "bin" / "python"), "-c", imports], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=300)
    assert ran.returncode == 0 and ran.stdout.strip() == "ok", ran.stderr[-3000:]
    checked = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "check"], capture_output=True, text=True,
                             env=env, timeout=300)
    missing = {wheelhouse._requirement(line.split(" requires ")[1])[0] for line in checked.stdout.splitlines()
               if line.endswith("which is not installed.")}
    assert "jupyterlab" in missing and missing <= wheelhouse.PRUNED, (missing - wheelhouse.PRUNED, checked.stdout)
    assert not [line for line in checked.stdout.splitlines() if "has requirement" in line], checked.stdout
