"""The batch grader's parts: the Dask executor with real worker processes (one that dies is retried once, then an
error), the kept results, content hashes, merging a GPU worker's items, and the worker's view of a notebook."""

import json

import pytest

from autograder.course import executors
from autograder.course import progress as progress_module
from autograder.engine import jobs, notebooks
from autograder.engine.records import KEPT, KeptResults
from autograder.settings import override
from tests.proving import ROOT


def job_for(student, scratch):
    return jobs.Job(student, "stability", b"{}", {}, seed=1, settings={"scratch": str(scratch)})


def test_a_dask_worker_that_dies_has_its_job_retried_once_elsewhere_then_an_error(tmp_path):
    import os

    from tests.course.batch_tasks import dies, raises

    environ = dict(os.environ)
    executor = executors.DaskExecutor(workers=2, task=dies)
    try:
        assert executor.workers == 2 and not executor.gpu and executor.name == "2 local Dask workers"
        done = {}
        for batch_ in (["once"], ["always", "fine"]):      # no more jobs at once than workers, as grade_batch does
            for student in batch_:
                executor.submit(len(done) + batch_.index(student), job_for(student, tmp_path))
            while len(executor):
                tag, data, error = executor.next_done()
                done[tag] = (data, error)
        executor.task = raises
        executor.submit(3, job_for("buggy", tmp_path))
        done[3] = executor.next_done()[1:]
    finally:
        executor.close()
    assert dict(os.environ) == environ      # Dask's nannies set OMP_NUM_THREADS=1 and more here: put back
    data, error = done[0]
    assert error is None and data["student"] == "once"    # the first try killed its worker; the retry finished
    data, error = done[1]
    assert data is None and "died twice while grading it" in error and "retried once" in error
    assert done[2][1] is None and done[2][0]["student"] == "fine"
    assert done[3] == (None, "ValueError on the grading worker: a grader bug for buggy")


@pytest.mark.quick
def test_kept_results_are_found_only_for_the_same_content_hash(tmp_path):
    store = KeptResults(tmp_path)
    store.put("ann", "stability", "abc", {"items": [], "seed": 7})
    assert store.get("ann", "stability", "abc") == {"items": [], "seed": 7}
    assert store.get("ann", "stability", "other") is None and store.get("bob", "stability", "abc") is None
    store.path("bob", "stability").parent.mkdir(parents=True)
    store.path("bob", "stability").write_text("{torn")        # a write cut short cannot be read as a result
    assert store.get("bob", "stability", "abc") is None
    assert sorted(p.name for p in (tmp_path / KEPT / "ann").iterdir()) == ["stability.json"]


@pytest.mark.quick
def test_the_content_hash_changes_with_the_notebook_the_checks_settings_but_not_the_gradebook():
    def digest(data, assignment):
        return jobs.submission_digest(data, jobs.grader_digest(assignment))

    data = b'{"cells": []}'
    first = digest(data, "stability")
    assert digest(data, "stability") == first
    assert digest(data + b" ", "stability") != first
    assert digest(data, "amp") != first
    with override({"grading": {"cell_timeout_s": 7}}):
        assert digest(data, "stability") != first
    with override({"grading": {"db_url": "postgresql+psycopg://x@127.0.0.1/gb"}}):
        assert digest(data, "stability") == first


@pytest.mark.quick
def test_a_gpu_workers_items_replace_the_pending_ones_in_order():
    cpu = {"items": [{"item": "a", "status": "passed"}, {"item": "speed", "status": "pending"},
                     {"item": "b", "status": "failed"}], "problems": ["p"], "seconds": 2.0, "worker": "w1",
           "peak_rss_mb": 400.0}
    gpu = {"items": [{"item": "speed", "status": "passed"}], "problems": ["p", "q"], "seconds": 1.0,
           "worker": "w2", "peak_rss_mb": 900.0}
    assert jobs.pending_items(cpu) == ["speed"]
    merged = jobs.merge(cpu, gpu)
    assert [r["status"] for r in merged["items"]] == ["passed", "passed", "failed"]
    assert merged["problems"] == ["p", "q"] and merged["seconds"] == 3.0 and merged["peak_rss_mb"] == 900.0
    assert merged["worker"] == "w1" and merged["gpu_worker"] == "w2" and jobs.pending_items(merged) == []


@pytest.mark.quick
def test_the_worker_reads_a_forged_notebook_as_the_instructor_wrote_it():
    """Metadata a student forged (points, a copy of a test cell, a fake id) is dropped, and a locked cell's edited
    source is the instructor's again: the cells run are those nbgrader's sanitizing steps leave."""
    source = jobs.source_map(ROOT, "stability")
    nb = notebooks.read(ROOT / "release" / "stability" / "stability.ipynb")
    honest = job_cells_of(nb, source)
    locked = next(c for c in nb["cells"] if source.get(notebooks.grade_id(c), {}).get("source") is not None
                  and c["cell_type"] == "code" and not notebooks.is_graded_test(c))
    locked["source"] = "stable_softmax = None\n"
    tests = [c for c in nb["cells"] if notebooks.is_graded_test(c)]
    tests[0]["metadata"]["nbgrader"]["points"] = 1000
    nb["cells"].append(json.loads(json.dumps(tests[1])))                 # a second copy of a test cell
    nb["cells"].append({"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "mine", "grade": True,
                        "points": 50}}, "source": "x = 1\n", "outputs": [], "execution_count": None})
    cells = job_cells_of(nb, source)
    assert cells[:len(honest)] == honest                         # the locked cell is the instructor's again
    assert [c[1] for c in cells[len(honest):]] == [notebooks.source_text(tests[1]), "x = 1\n"]   # plain code now
    assert all(c[0].startswith("cell ") for c in cells[len(honest):])


def job_cells_of(nb, source, topic="stability"):
    """The cells a worker runs for ``nb``, read back from its bytes."""
    return jobs.job_cells(notebooks.loads(json.dumps(nb).encode()), topic, source)


@pytest.mark.quick
def test_progress_lines_count_and_give_an_eta():
    lines = []
    progress = progress_module.Progress(3, lambda text, flush=True: lines.append(text), bar=False)
    progress.say("start")
    progress.step("ann/stability: 29/29 points (2.0 s)")
    progress.step("bob/stability: kept", graded=False)
    progress.step("cy/stability: 0/29 points (1.0 s)")
    assert lines[0] == "start" and lines[1].startswith("[1/3] ann/stability: 29/29 points (2.0 s) (")
    assert "left)" in lines[1] and lines[3].startswith("[3/3] cy/stability") and "left" not in lines[3]


def test_notebook_cells_match_the_instructors_release():
    """The worker's sanitizing leaves an untouched release notebook as it is."""
    source = jobs.source_map(ROOT, "amp")
    nb = notebooks.read(ROOT / "release" / "amp" / "amp.ipynb")
    assert job_cells_of(nb, source, "amp") == notebooks.code_cells(nb, "amp")


WITHOUT_NBGRADER = """
import json, sys
for name in ("nbgrader", "nbformat", "nbconvert", "jupyter_client", "traitlets"):
    sys.modules[name] = None                      # a GPU worker has none of these
from autograder.engine import jobs, notebooks
from autograder.engine.records import KEPT, KeptResults
from tests.proving import ROOT
data = sys.stdin.buffer.read()
job = jobs.Job("ann", "stability", data, jobs.source_map(ROOT, "stability"), seed=5, sandbox=True,
               grader=jobs.checks_digest("stability"))
result = jobs.grade_job(job)
print(json.dumps([[r["item"], r["status"]] for r in result["items"]]))
"""


def test_a_worker_grades_a_job_without_nbgrader_or_the_course():
    """What a GPU worker runs: the notebook's bytes in, verdicts out, with no nbgrader, Jupyter or course files."""
    import subprocess
    import sys

    from autograder.commands.demo import _fill

    release = notebooks.read(ROOT / "release" / "stability" / "stability.ipynb")
    answers = notebooks.solution_sources(notebooks.read(ROOT / "source" / "stability" / "stability.ipynb"))
    data = json.dumps(_fill(release, answers)).encode()
    out = subprocess.run([sys.executable, "-c", WITHOUT_NBGRADER], input=data, capture_output=True, cwd=ROOT,
                         timeout=600)
    assert out.returncode == 0, out.stderr.decode()[-2000:]
    verdicts = json.loads(out.stdout.decode().splitlines()[-1])
    assert verdicts and all(status == "passed" for _, status in verdicts), verdicts


def test_a_scheduler_that_cannot_be_reached_stops_grade_with_what_to_do(tmp_path):
    import subprocess
    import sys

    from autograder.commands.build import scratch_course

    course = scratch_course(ROOT, tmp_path)         # a course (source/ and nbgrader_config.py), nothing graded
    before = sorted(p.relative_to(course) for p in course.rglob("*"))
    out = subprocess.run([sys.executable, "-m", "autograder", "--course", str(course), "grade", "stability",
                          "--scheduler", "tcp://127.0.0.1:1"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stdout + out.stderr
    assert out.stderr.startswith("Cannot grade: the Dask scheduler at tcp://127.0.0.1:1 cannot be reached")
    assert "dask worker tcp://127.0.0.1:1" in out.stderr and "Traceback" not in out.stderr
    assert sorted(p.relative_to(course) for p in course.rglob("*")) == before      # nothing written
