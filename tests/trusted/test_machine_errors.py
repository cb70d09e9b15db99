"""A broken grading machine is never the student's failure, and memory is bounded by what a process writes.

Each test grades through the real sandboxed worker (``jobs.grade_job_here``, the path of ``grade``, nbgrader and
Dask). CUDA's start is made to fail for real: ``settings.grading.expect_cuda`` tells the grader to expect CUDA on this
machine without one, so the worker's own ``torch.cuda.init()`` fails before any student code runs, as on a GPU
machine whose sandbox cannot start CUDA.
"""

import pytest

from autograder.engine import notebooks
from autograder.engine.jobs import grade_job_here
from autograder.engine.trusted_runner import MachineError
from autograder.settings import override
from tests.proving import ROOT

TOPIC = "operators"


def reference_cells(topic=TOPIC):
    return notebooks.code_cells(notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb"), topic)


def test_a_worker_that_cannot_start_cuda_stops_grading_before_anything_is_scored(ready):
    with override({"grading": {"expect_cuda": True}}), pytest.raises(MachineError) as raised:
        grade_job_here(TOPIC, reference_cells(), seed=5, sandbox=True)
    message = str(raised.value)
    assert message.startswith("the grading machine cannot grade: settings.grading.expect_cuda is set, but CUDA "
                              "does not start in the worker that runs the student's code")
    assert "Torch not compiled with CUDA enabled" in message        # torch's own words, from the real start
    assert "Nothing was scored: not the students' failure" in message and "Fix the machine" in message


def test_a_worker_that_cannot_start_stops_grading_before_anything_is_scored(ready):
    """The sandbox starts, but the worker dies before it answers (here: too little memory to import torch)."""
    with override({"grading": {"memory_limit_gb": 0.05}}), pytest.raises(MachineError) as raised:
        grade_job_here(TOPIC, reference_cells(), seed=5, sandbox=True)
    assert "ended before any student code ran" in str(raised.value)
    assert "settings.grading.memory_limit_gb" in str(raised.value)


FAKE_MACHINE_FAILURE = '''
from autograder.seam import worker as _worker
_worker.Worker.device = {"cuda": False, "expected": True, "error": "RuntimeError: cudaGetDeviceCount() out of memory"}
raise RuntimeError("Unexpected error from cudaGetDeviceCount(): Error 2: out of memory")
'''


def test_a_student_cannot_fake_a_machine_failure(ready):
    """Code that claims CUDA is broken, in the worker's own report and in what it raises, stops nothing: the device
    was read before any student code ran, the cell's error is the student's, and the assignment to the grader's
    internals puts the items it reaches under review (never a grader or machine error)."""
    cells = reference_cells() + [("fake", FAKE_MACHINE_FAILURE)]
    with override({"grading": {"expect_cuda": False}}):
        data = grade_job_here(TOPIC, cells, seed=5, sandbox=True)
    statuses = {r["status"] for r in data["items"]}
    assert statuses <= {"passed", "under review"}, [r["message"] for r in data["items"]]
    assert [c["error"] for c in data["cells"] if c["cell"] == "fake"] == [
        "RuntimeError: Unexpected error from cudaGetDeviceCount(): Error 2: out of memory"]


HOG = '''
def row_sum(x):
    return bytearray(2 * 2**30)
'''


def test_memory_past_the_limit_is_the_students_and_says_so(ready):
    cells = [(name, HOG if name == "row_sum" else source) for name, source in reference_cells()]   # one definition
    with override({"grading": {"memory_limit_gb": 1}}):
        data = grade_job_here(TOPIC, cells, seed=5, sandbox=True)
    hogged = [r for r in data["items"] if r["kind"] == "raised: MemoryError"]
    assert [r["item"] for r in hogged] == ["row_sum", "row_sum_vectorized", "row_sum_speed"]
    assert "raised MemoryError" in hogged[0]["message"] and ("Your code used more memory than the grader gives each "
                                                             "process (1 GiB written, settings.grading.memory_limit_gb)"
                                                             in hogged[0]["message"])
    assert all("same cause as check_row_sum" in r["message"] for r in hogged[1:])
    assert all(r["status"] != "grader_error" for r in data["items"])
