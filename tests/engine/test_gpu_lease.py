"""One CUDA user per GPU while anything is timed: the lease is a real readers-writer lock of flocks, held by real
processes. Untimed CUDA work shares the GPU; a timed item waits for it to end, holds the GPU alone, and what comes
after it waits behind it."""

import fcntl
import os
import subprocess
import sys
import textwrap
import time

import pytest

from autograder.engine.gpu_lease import gpu_lease
from tests.proving import ROOT

HOLD = textwrap.dedent("""
    import sys, time
    from autograder.engine.gpu_lease import gpu_lease
    name, directory, seconds, kind, log = sys.argv[1:6]
    with gpu_lease(name, directory=directory, exclusive=kind == "exclusive"):
        with open(log, "a") as out:
            out.write(f"{kind} {sys.argv[6]} start {time.time()}\\n")
        print("held", flush=True)
        time.sleep(float(seconds))
        with open(log, "a") as out:
            out.write(f"{kind} {sys.argv[6]} end {time.time()}\\n")
    """)


def holder(name, directory, seconds, kind="exclusive", tag="a", wait=True, log=None):
    """A process that holds the lease of ``name`` for ``seconds`` (``wait``: once it holds it), writing when it
    started and ended into ``log`` (``directory/events.log``)."""
    log = log or directory / "events.log"
    proc = subprocess.Popen([sys.executable, "-c", HOLD, name, str(directory), str(seconds), kind, str(log), tag],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    if wait:
        assert proc.stdout.readline().strip() == "held"
    return proc


def wait_for_a_waiting_lease(turnstile, timeout=30):
    """Until a process waits for the lease (it holds the turnstile while it waits)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if turnstile.exists():
            fd = os.open(turnstile, os.O_RDWR)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_UN)
            except BlockingIOError:
                return
            finally:
                os.close(fd)
        time.sleep(0.02)
    raise AssertionError("no process came to wait for the lease")


def events(directory):
    """``{(kind tag, "start"|"end"): time}`` from the holders' log."""
    out = {}
    for line in (directory / "events.log").read_text().splitlines():
        kind, tag, what, when = line.split()
        out[(f"{kind} {tag}", what)] = float(when)
    return out


@pytest.mark.quick
def test_a_second_timing_on_the_same_gpu_waits_for_the_first_and_another_gpu_does_not(tmp_path):
    first = holder("gpu-a", tmp_path, 1.5)
    try:
        started = time.monotonic()
        with gpu_lease("gpu-b", directory=tmp_path) as waited:      # another GPU: free
            assert waited < 0.5
        with gpu_lease("gpu-a", directory=tmp_path) as waited:      # the same GPU: after the first is done
            assert waited > 0.5 and time.monotonic() - started >= 1.0
    finally:
        first.wait()


@pytest.mark.quick
def test_untimed_cuda_work_shares_the_gpu_but_never_with_a_timing(tmp_path):
    shared = holder("gpu-a", tmp_path, 1.5, "shared")
    try:
        with gpu_lease("gpu-a", directory=tmp_path, exclusive=False) as waited:    # two notebooks' untimed work
            assert waited < 0.5
        with gpu_lease("gpu-a", directory=tmp_path, exclusive=True) as waited:     # a timing: once they are done
            assert waited > 0.5
    finally:
        shared.wait()


@pytest.mark.quick
def test_a_waiting_timing_is_not_overtaken_and_runs_with_the_gpu_otherwise_idle(tmp_path):
    """Notebook 1's untimed CUDA work holds the GPU; notebook 2's timed item asks for it, then notebook 3's untimed
    work: the timing starts when notebook 1's work ends, and notebook 3's starts only when the timing has ended."""
    first = holder("gpu-a", tmp_path, 1.5, "shared", "one")
    timed = holder("gpu-a", tmp_path, 1.0, "exclusive", "two", wait=False)
    wait_for_a_waiting_lease(tmp_path / "gpu-a.turnstile")
    third = holder("gpu-a", tmp_path, 0.2, "shared", "three", wait=False)
    for proc in (first, timed, third):
        assert proc.wait(timeout=30) == 0
    seen = events(tmp_path)
    assert seen[("shared one", "end")] <= seen[("exclusive two", "start")]
    assert seen[("exclusive two", "end")] <= seen[("shared three", "start")]
    order = sorted(seen, key=seen.get)
    assert order == [("shared one", "start"), ("shared one", "end"), ("exclusive two", "start"),
                     ("exclusive two", "end"), ("shared three", "start"), ("shared three", "end")], order


@pytest.mark.quick
def test_the_lease_ends_with_a_killed_holder(tmp_path):
    first = holder("gpu-a", tmp_path, 600)
    first.kill()
    first.wait()
    with gpu_lease("gpu-a", directory=tmp_path) as waited:
        assert waited < 5


@pytest.mark.quick
def test_a_notebook_graded_with_cuda_takes_the_lease_and_its_wait_is_given_back(tmp_path, monkeypatch):
    """``trusted_runner.gpu_turn``, the lease every CUDA grading step takes: untimed work waits for another process's
    timing on the same GPU, and the wait is added to the notebook's budget."""
    import torch

    from autograder import settings as settings_module
    from autograder.engine import gpu_lease as lease_module
    from autograder.engine.budget import Budget
    from autograder.engine.trusted_runner import gpu_turn

    if torch.cuda.is_available():
        pytest.skip("names the GPU by CUDA_VISIBLE_DEVICES, as a machine without CUDA does")
    name = f"test-{os.getpid()}"                        # no other run's lease
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", name)
    assert lease_module.gpu_name() == f"index-{name}"
    timing = holder(f"index-{name}", lease_module.DIRECTORY, 1.5, "exclusive", "timing", log=tmp_path / "log")
    try:
        budget = Budget(60)
        ends = budget.ends
        with settings_module.override({"grading": {"expect_cuda": True}}):
            with gpu_turn(budget, timed=False):
                pass
        assert budget.ends - ends > 0.5                 # waited for the timing, and got that time back
        budget = Budget(60)
        with settings_module.override({"grading": {"expect_cuda": False}}), gpu_turn(budget, timed=True):
            pass                                         # without CUDA nothing is leased
    finally:
        timing.wait()
