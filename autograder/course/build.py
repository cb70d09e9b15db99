"""Build ``release/`` (with nbgrader's generate_assignment) and ``solutions/`` from ``source/``.

``python -m autograder build`` rewrites both; ``python -m autograder build --check``
builds into a temporary directory and fails when the committed files differ.
"""

import contextlib
import filecmp
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from . import notebooks


def topics(course):
    """The assignments that exist in ``source/``, in the order students see them."""
    from ..results import TOPICS
    present = {p.name for p in (Path(course) / "source").iterdir()
               if (p / f"{p.name}.ipynb").exists()}
    return [t for t in TOPICS if t in present] + sorted(present - set(TOPICS))


def nbgrader(course, *args, check=True, timeout=None, env=None, preexec_fn=None):
    """Run an nbgrader command in ``course``; return the CompletedProcess (output captured).

    It runs in its own process group, so that on ``timeout`` the kernel it started
    is killed with it before ``subprocess.TimeoutExpired`` is raised.
    """
    run_env = dict(os.environ, **(env or {}))
    # nbgrader runs `alembic` (and kernels) from PATH: put this interpreter's scripts first.
    run_env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + run_env.get("PATH", "")
    run_env.setdefault("PYTHONWARNINGS", "ignore")
    command = [sys.executable, "-m", "nbgrader", *args]
    with subprocess.Popen(command, cwd=course, env=run_env, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, start_new_session=True, preexec_fn=preexec_fn) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    done = subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)
    if check and done.returncode:
        raise subprocess.CalledProcessError(done.returncode, command, stdout, stderr)
    return done


def scratch_course(course, dest, with_release=False):
    """A minimal copy of the course (config + source [+ release]) at ``dest``."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy2(Path(course) / "nbgrader_config.py", dest / "nbgrader_config.py")
    shutil.copytree(Path(course) / "source", dest / "source", dirs_exist_ok=True)
    if with_release and (Path(course) / "release").exists():
        shutil.copytree(Path(course) / "release", dest / "release", dirs_exist_ok=True)
    return dest


@contextlib.contextmanager
def _scripts_on_path():
    """nbgrader runs `alembic` from PATH: put this interpreter's scripts first while it works."""
    saved = os.environ.get("PATH", "")
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + saved
    try:
        yield
    finally:
        os.environ["PATH"] = saved


def generate_assignments(course, names):
    """The real ``nbgrader generate_assignment`` for each of ``names``, in this process.

    nbgrader's API pays its start-up (config, gradebook migration) once instead of
    once per assignment: 8 assignments take seconds, not a minute. Yields each name when done.
    """
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.root = str(Path(course).resolve())
    with _scripts_on_path():
        api = NbGraderAPI(config=config)
        for name in names:
            result = api.generate_assignment(name, force=True, create=True)
            if not result["success"]:
                raise RuntimeError(f"nbgrader generate_assignment {name} failed:\n{result.get('error')}\n"
                                   f"{result.get('log', '')}")
            yield name


def build_into(course, out, only=None):
    """Write ``out/release/<topic>/`` and ``out/solutions/<topic>.py`` for every topic (or those in ``only``)."""
    course, out = Path(course), Path(out)
    with tempfile.TemporaryDirectory(prefix="epl-build-") as tmp:
        work = scratch_course(course, tmp)
        names = [t for t in topics(course) if not only or t in only]
        for topic in generate_assignments(work, names):
            release = out / "release" / topic
            if release.exists():
                shutil.rmtree(release)
            shutil.copytree(work / "release" / topic, release)
            nb = notebooks.read(course / "source" / topic / f"{topic}.ipynb")
            (out / "solutions").mkdir(parents=True, exist_ok=True)
            (out / "solutions" / f"{topic}.py").write_text(notebooks.solutions_module(nb, topic), encoding="utf-8")
            print(f"built {topic}: release/{topic}/, solutions/{topic}.py", flush=True)


def differences(course):
    """Paths under release/ and solutions/ that differ from what source/ builds (empty when up to date)."""
    course = Path(course)
    with tempfile.TemporaryDirectory(prefix="epl-check-") as tmp:
        build_into(course, tmp)
        fresh, found = Path(tmp), []
        for kind in ("release", "solutions"):
            committed = {p.relative_to(course / kind) for p in (course / kind).rglob("*")
                         if p.is_file() and "__pycache__" not in p.parts} if (course / kind).exists() else set()
            built = {p.relative_to(fresh / kind) for p in (fresh / kind).rglob("*") if p.is_file()}
            for rel in sorted(committed | built):
                if rel not in committed:
                    found.append(f"{kind}/{rel} is missing")
                elif rel not in built:
                    found.append(f"{kind}/{rel} is not built from source/ (stale)")
                elif not filecmp.cmp(course / kind / rel, fresh / kind / rel, shallow=False):
                    found.append(f"{kind}/{rel} is out of date")
        return found


def main(course=".", check=False, only=None):
    if check:
        found = differences(course)
        for line in found:
            print(line)
        if found:
            print("release/ or solutions/ is out of date: run `python -m autograder build` and commit.")
            return 1
        print("release/ and solutions/ match source/.")
        return 0
    build_into(course, course, only=only)
    return 0
