"""Session fixtures (registered in ``tests/conftest.py``, so built once for tests/kit and tests/hub alike): the
student kit, built once per session, and a fresh virtual environment with only the kit installed.

Both live under one temporary directory of mode 0755 (not pytest's own, which is 0700), so that other users (the
JupyterHub test's students) can read the notebooks and run the venv's interpreter, kernel and Jupyter. The venv is
made with ``python -m venv`` and ``pip install torch==2.13.0 <wheel>`` from the package index, with the kit's
dependencies (nbgrader, JupyterLab), quicker from pip's cache.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.commands.kit import build_kit

ROOT = Path(__file__).resolve().parents[1]
TORCH = "torch==2.13.0"   # the README's pin (the CPU build here)


@pytest.fixture(scope="session")
def kit_home():
    """A directory of mode 0755 for the kit and its venv, removed after the session."""
    home = Path(tempfile.mkdtemp(prefix="epl-student-kit-"))
    home.chmod(0o755)
    yield home
    shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(scope="session")
def kit_wheel(kit_home):
    """The kit built from this repository (``python -m autograder kit``'s function): the wheel's path; the
    release notebooks are in ``kit_wheel.parent / "release"``."""
    return build_kit(ROOT, kit_home / "kit")


def _umask_022():
    os.umask(0o022)   # every file of the venv readable by everyone, whatever the caller's umask


@pytest.fixture(scope="session")
def kit_venv(kit_home, kit_wheel):
    """A fresh venv (its directory) with only the student kit and its dependencies: no course repository on any
    path. Another user can run its ``bin/python`` and ``bin/jupyter``."""
    venv = kit_home / "venv"
    env = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "VIRTUAL_ENV")}
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, cwd=kit_home, env=env,
                   preexec_fn=_umask_022, timeout=300)
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", TORCH, str(kit_wheel)], cwd=kit_home,
                          env=env, preexec_fn=_umask_022, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, f"pip install of the kit failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    for folder, dirs, _ in os.walk(kit_home):
        for name in dirs:
            (Path(folder) / name).chmod(0o755)
    return venv
