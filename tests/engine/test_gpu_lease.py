"""One CUDA-timed item per GPU at a time, across processes: the lease is a real flock, held by real processes."""

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
    with gpu_lease(sys.argv[1], directory=sys.argv[2]):
        print("held", flush=True)
        time.sleep(float(sys.argv[3]))
    """)


def holder(name, directory, seconds):
    proc = subprocess.Popen([sys.executable, "-c", HOLD, name, str(directory), str(seconds)], stdout=subprocess.PIPE,
                            text=True, cwd=ROOT)
    assert proc.stdout.readline().strip() == "held"
    return proc


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
def test_the_lease_ends_with_a_killed_holder(tmp_path):
    first = holder("gpu-a", tmp_path, 600)
    first.kill()
    first.wait()
    with gpu_lease("gpu-a", directory=tmp_path) as waited:
        assert waited < 5
