"""docs/scaling.md's recipe for several machines, run from the block as written: its install line is the README's,
its scheduler and worker lines start a real Dask scheduler and workers (SCHEDULER and the port the test's), and its
grader line grades a course's submission on them.

The grading machine here is this repository's venv (the clone the recipe installs), in a folder of its own with
nothing of the course: the worker has only what the recipe installs.
"""

import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

from tests.docs.shell_blocks import block
from tests.proving import ROOT

pytestmark = pytest.mark.e2e


def recipe():
    """``{"install": line, "scheduler": line, "worker": line, "gpu worker": line, "grader": line}`` of the block."""
    lines = [line for line in block("several-machines").text.splitlines() if line and not line.startswith("#")]
    install, scheduler, worker, gpu_worker, grader = lines
    return {"install": install, "scheduler": scheduler, "worker": worker, "gpu worker": gpu_worker, "grader": grader}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _local(line, port):
    return line.replace("tcp://SCHEDULER:8786", f"tcp://127.0.0.1:{port}").replace("--port 8786", f"--port {port}")


def test_the_recipe_installs_as_the_readme_does():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = recipe()["install"]
    assert install.startswith("bash scripts/install-system-packages.sh sandbox && ")
    # the README's venv and pinned pip line, with the grader's package alone (no extra: a worker only grades)
    assert install.split(" && ", 1)[1] == "python3 -m venv .venv && .venv/bin/pip install -q torch==2.13.0 -e ."
    assert "python3 -m venv .venv && .venv/bin/pip install -q torch==2.13.0 -e '." in readme
    assert "`pip install -e .` installs what grading needs" in readme
    assert "kit" not in install


def test_a_worker_started_as_written_grades_the_graders_job(tmp_path):
    from autograder.commands.build import scratch_course
    from autograder.engine import notebooks

    steps, port = recipe(), _free_port()
    machine = tmp_path / "grading-machine"
    machine.mkdir()
    (machine / ".venv").symlink_to(sys.prefix)
    course = scratch_course(ROOT, tmp_path / "course", with_release=True)
    for topic in os.listdir(course / "source"):
        if topic != "stability":                  # one assignment: `grade` registers every assignment of source/
            subprocess.run(["rm", "-rf", str(course / "source" / topic)], check=True)
    (course / "submitted" / "alice" / "stability").mkdir(parents=True)
    notebooks.write(notebooks.read(course / "release" / "stability" / "stability.ipynb"),
                    course / "submitted" / "alice" / "stability" / "stability.ipynb")
    (course / ".venv").symlink_to(sys.prefix)
    env = {k: v for k, v in os.environ.items() if k not in ("AUTOGRADER_GRADING_SEED", "PYTHONPATH")}
    started = []
    try:
        for name in ("scheduler", "worker"):
            log = open(tmp_path / f"{name}.log", "wb")   # noqa: SIM115 - closed with the process
            started.append(subprocess.Popen(["bash", "-c", _local(steps[name], port)], cwd=machine, env=env,
                                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        _wait_for_workers(f"tcp://127.0.0.1:{port}", started)
        run = subprocess.run(["bash", "-euo", "pipefail", "-c", _local(steps["grader"], port)], cwd=course, env=env,
                             capture_output=True, text=True, timeout=600)
    finally:
        for proc in reversed(started):      # each command's process group: bash and the dask processes it started
            _signal_group(proc, signal.SIGTERM)
        for proc in started:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
                proc.wait()
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-4000:]
    assert f"Grading 1 submission with the Dask cluster at tcp://127.0.0.1:{port}" in out
    assert re.search(r"alice/stability: 0/29 points", out), out[-4000:]
    assert "error" not in out.split("Done in", 1)[1].split(".")[0].replace("0 errors", ""), out[-2000:]


def _signal_group(proc, signum):
    try:
        os.killpg(proc.pid, signum)
    except ProcessLookupError:
        pass


def _wait_for_workers(address, started, timeout=180):
    from distributed import Client

    deadline = time.monotonic() + timeout
    while True:
        assert all(p.poll() is None for p in started), "the scheduler or the worker exited (see its .log)"
        try:
            with Client(address, timeout=5) as client:
                client.wait_for_workers(1, timeout=max(1, deadline - time.monotonic()))
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)
