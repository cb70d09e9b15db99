"""torch.profiler's own lines stay off the instructor's terminal: grading the memory assignment (whose oracle profiles
in the grading process) prints none of them, graded in the main thread (`grade`) or in another one (a Dask worker's)."""

import subprocess
import sys
import textwrap

import pytest

from tests.proving import ROOT

GRADE_MEMORY = textwrap.dedent("""
    import sys, threading
    from autograder.engine import notebooks
    from autograder.engine.jobs import grade_job_here
    cells = notebooks.code_cells(notebooks.read("source/memory/memory.ipynb"), "memory")
    scores = []
    def grade():
        data = grade_job_here("memory", cells, seed=5, sandbox=True)
        scores.append(sum(r["score"] for r in data["items"]) == sum(r["max_score"] for r in data["items"]))
    if sys.argv[1] == "thread":
        worker = threading.Thread(target=grade)
        worker.start()
        worker.join()
    else:
        grade()
    print("full marks" if scores == [True] else f"not full marks: {scores}")
    """)


@pytest.mark.e2e
@pytest.mark.parametrize("where", ["main", "thread"])
def test_grading_memory_prints_no_profiler_lines(ready, where):
    done = subprocess.run([sys.executable, "-c", GRADE_MEMORY, where], capture_output=True, text=True, timeout=600,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "full marks"
    for line in (done.stdout + done.stderr).splitlines():
        assert "USDT:" not in line and "External init callback" not in line and "profiler_st" not in line, line
