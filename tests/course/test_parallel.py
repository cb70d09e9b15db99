"""Grading a class in parallel on Dask, for real: the demo's students (and a forger) on two of its assignments.

One course, prepared once, copied for each run, every run with the same hidden-test seed:

* ``serial``: ``grade_all`` in this process (``--workers 0``), nbgrader's SQLite gradebook: the grades to match.
* ``resumed``: ``python -m autograder grade --workers 2`` (a local Dask cluster), SIGKILLed with its workers once
  some results are kept and before the end, then run again: it grades only what was not finished.
* ``postgres``: a real PostgreSQL server started here holds the gradebook (``grading.db_url``), and the grading
  runs on a Dask scheduler and two ``dask worker`` processes, one started with ``--resources GPU=1``; then
  ``grade --pending`` on the same cluster.
"""

import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from autograder.commands.build import generate_assignments, scratch_course
from autograder.commands.demo import STUDENTS, write_submissions
from autograder.commands.grade import grade_all
from autograder.course import executors
from autograder.course.grading import load_report, read_grades
from autograder.engine import notebooks
from autograder.engine.records import KEPT as RESULTS
from autograder.settings import override
from tests.dask_processes import dask_processes
from tests.postgres import postgres_server, require_postgres
from tests.proving import ROOT

pytestmark = pytest.mark.e2e
TOPICS = ["stability", "amp"]
SEED = 424242
CLASS = [*STUDENTS, "forger"]


def forged(course, topic):
    """The reference answers with forged nbgrader metadata (1000 points on a test cell, a second copy of one)
    and an edited locked cell: the grader must read it as the instructor wrote it, on every path."""
    nb = notebooks.read(course / "submitted" / "reference" / topic / f"{topic}.ipynb")
    tests = [c for c in nb["cells"] if notebooks.is_graded_test(c)]
    tests[0]["metadata"]["nbgrader"]["points"] = 1000
    nb["cells"].append(json.loads(json.dumps(tests[-1])))
    locked = next(c for c in nb["cells"] if c["cell_type"] == "code" and notebooks.nbgrader_meta(c).get("locked")
                  and not notebooks.is_graded_test(c))
    locked["source"] = "raise SystemExit('a locked cell, edited')\n"
    return nb


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    course = scratch_course(ROOT, tmp_path_factory.mktemp("parallel") / "course")
    list(generate_assignments(course, TOPICS))
    write_submissions(ROOT, course, TOPICS)
    for topic in TOPICS:
        nb = forged(course, topic)
        (course / "submitted" / "forger" / topic).mkdir(parents=True)
        notebooks.write(nb, course / "submitted" / "forger" / topic / f"{topic}.ipynb")
    return course


def copy_of(prepared, tmp_path_factory, name):
    target = tmp_path_factory.mktemp(name) / "course"
    shutil.copytree(prepared, target)
    return target


def grades_in(course, report=None):
    """``{student/assignment: (status, {item: [score, max]}, [pending])}`` from the grading report."""
    report = report or load_report(course)
    return {key: (r["status"], r["grades"], r["pending"]) for key, r in sorted(report.items())}


def nbgrader_csv(course, env=None):
    """nbgrader's own export of the gradebook: the scores per student and assignment."""
    subprocess.run([sys.executable, "-m", "nbgrader", "export", "--to", str(course / "nbgrader.csv")], cwd=course,
                   env=env, check=True, capture_output=True)
    rows = csv.DictReader(open(course / "nbgrader.csv", encoding="utf-8"))
    return sorted((r["student_id"], r["assignment"], r["raw_score"], r["score"], r["max_score"]) for r in rows)


def grade_command(course, *args):
    return [sys.executable, "-m", "autograder", "--course", str(course), "grade", *TOPICS, "--seed", str(SEED),
            *args]


@pytest.fixture(scope="module")
def serial(prepared, tmp_path_factory):
    course = copy_of(prepared, tmp_path_factory, "serial")
    grade_all(course, TOPICS, CLASS, progress=None, seed=SEED, workers=0)
    return course


def test_serial_grades_are_what_each_student_deserves(serial):
    report = load_report(serial)
    assert report["reference/stability"]["grades"] == report["forger/stability"]["grades"]
    assert all(s == m for s, m in report["reference/stability"]["grades"].values())
    assert report["reference/amp"]["pending"] == ["speed"] and report["untouched/amp"]["pending"] == []
    assert report["mangled/stability"]["status"] == "error"
    assert not any("graded again here" in p for r in report.values() for p in r["problems"])


def finished_results(kept):
    """``{path: mtime}`` of the results kept whole; a hidden ``.<assignment>-*.json`` is a write still under way (or
    one a kill cut short), not a result."""
    return {p.relative_to(kept): p.stat().st_mtime_ns for p in kept.rglob("*.json") if not p.name.startswith(".")}


@pytest.fixture(scope="module")
def resumed(prepared, tmp_path_factory):
    """Killed (SIGKILL, the grader and its local Dask workers) mid-run, then run again to the end."""
    course = copy_of(prepared, tmp_path_factory, "resumed")
    first = subprocess.Popen(grade_command(course, "--workers", "2"), stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True, text=True)
    kept = course / RESULTS
    deadline = time.monotonic() + 300
    while len(finished_results(kept)) < 3 and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    before = finished_results(kept)
    unfinished = [p.relative_to(kept) for p in kept.rglob(".*.json")]     # a write the kill cut short, if any
    report_before = load_report(course)
    second = subprocess.run(grade_command(course, "--workers", "2"), capture_output=True, text=True, timeout=600)
    after = finished_results(kept)
    left = [p.relative_to(kept) for p in kept.rglob(".*.json")]
    return {"course": course, "before": before, "after": after, "unfinished": unfinished, "left": left, "output": second.stdout + second.stderr,
            "returncode": second.returncode, "report_before": report_before, "killed_output": first.stdout.read()}


def test_a_killed_run_resumes_with_nothing_lost_or_graded_again(serial, resumed):
    assert resumed["returncode"] == 0, resumed["output"]
    graded_in_all = 2 * len(CLASS) - 1              # all but mangled's unreadable stability notebook
    assert 3 <= len(resumed["before"]) < graded_in_all, resumed["killed_output"]
    for path, mtime in resumed["before"].items():   # what was finished before the kill was not graded again
        assert resumed["after"][path] == mtime, path
    assert len(resumed["after"]) == graded_in_all
    assert resumed["left"] == [], f"unfinished writes left behind: {resumed['left']} (killed with {resumed['unfinished']})"
    assert grades_in(resumed["course"]) == grades_in(serial)
    assert "with 2 local Dask workers" in resumed["output"] and "Done in" in resumed["output"]
    assert re.search(r"\d+ notebooks? graded", resumed["output"])


def test_a_rerun_keeps_what_was_recorded_and_regrades_what_changed(serial, resumed):
    course = resumed["course"]
    target = course / "submitted" / "untouched" / "stability" / "stability.ipynb"
    shutil.copy(course / "submitted" / "reference" / "stability" / "stability.ipynb", target)
    out = subprocess.run(grade_command(course, "--workers", "0"), capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    kept = 2 * len(CLASS) - 1 - 1                   # all but the unreadable notebook and the changed one
    assert f"{kept} unchanged since they were recorded" in out.stdout, out.stdout
    graded_lines = [line for line in out.stdout.splitlines() if line.startswith("[")]
    assert [line.split(":")[0].split("] ")[1] for line in graded_lines] == ["mangled/stability", "untouched/stability"]
    report = load_report(course)
    assert report["untouched/stability"]["grades"] == load_report(serial)["reference/stability"]["grades"]


@pytest.fixture(scope="module")
def postgres(prepared, tmp_path_factory):
    require_postgres()
    course = copy_of(prepared, tmp_path_factory, "postgres")
    scratch = tmp_path_factory.mktemp("postgres-cluster")
    with postgres_server(scratch) as server, dask_processes(scratch, workers=1, gpu_workers=1) as (address, kinds, _):
        (course / "settings.json").write_text(json.dumps({"grading": {"db_url": server.url}}))
        env = dict(os.environ, AUTOGRADER_SETTINGS=str(course / "settings.json"))
        graded = subprocess.run(grade_command(course, "--scheduler", address), capture_output=True, text=True,
                                timeout=600, env=env)
        with override({"grading": {"db_url": server.url}}):      # the course's gradebook is this one
            report = load_report(course)
        pending = subprocess.run(grade_command(course, "--scheduler", address, "--pending"), capture_output=True,
                                 text=True, timeout=600, env=env)
        with override({"grading": {"db_url": server.url}}):
            gradebook = {f"{s}/{a}": read_grades(course, s, a) for s in CLASS for a in TOPICS}
        exported = nbgrader_csv(course, env)
    return {"course": course, "graded": graded, "pending": pending, "report": report, "kinds": kinds,
            "gradebook": gradebook, "nbgrader_csv": exported}


def test_a_postgresql_gradebook_gives_the_grades_and_exports_of_sqlite(prepared, serial, postgres):
    assert postgres["graded"].returncode == 0, postgres["graded"].stdout + postgres["graded"].stderr
    assert grades_in(postgres["course"], postgres["report"]) == grades_in(serial)
    assert postgres["gradebook"] == {f"{s}/{a}": read_grades(serial, s, a) for s in CLASS for a in TOPICS}
    assert postgres["nbgrader_csv"] == nbgrader_csv(serial)
    sqlite = "gradebook.db"       # the course's SQLite gradebook (assignments released into it) was not touched
    assert (postgres["course"] / sqlite).read_bytes() == (prepared / sqlite).read_bytes()


def test_gpu_items_go_to_the_gpu_worker_and_stay_pending_without_cuda(postgres):
    """The "GPU" worker here has no CUDA: the items it was sent are still pending, never passed."""
    gpu = [a for a, kind in postgres["kinds"].items() if kind == "gpu"]
    report = postgres["report"]
    waiting = sorted(k for k, r in report.items() if r["pending"])
    assert waiting == ["buggy/amp", "forger/amp", "mangled/amp", "reference/amp"]
    assert all(report[k]["gpu_worker"] in gpu and report[k]["grades"]["speed"][0] == 0 for k in waiting)
    out = postgres["pending"].stdout
    assert postgres["pending"].returncode == 0, out + postgres["pending"].stderr
    assert "Grading 4 submissions with the Dask cluster at" in out and ", with a GPU" in out
    assert sorted(line.split(":")[0].split("] ")[1] for line in out.splitlines() if line.startswith("[")) == waiting


def test_a_local_cluster_gives_the_gpu_resource_once_per_gpu_and_each_worker_its_share_of_the_cores():
    sixteen = executors.local_workers(16, 1, cores=16, visible="")
    assert sum(w["resources"].get("GPU", 0) for w in sixteen) == 1          # one CUDA-timed job at a time on it
    assert {w["env"]["OMP_NUM_THREADS"] for w in sixteen} == {"1"}
    assert {w["env"]["CUDA_VISIBLE_DEVICES"] for w in sixteen} == {"0"}
    two = executors.local_workers(4, 2, cores=16, visible="2,3")
    assert [w["resources"] for w in two] == [{"GPU": 1}, {"GPU": 1}, {}, {}]
    assert [w["env"]["CUDA_VISIBLE_DEVICES"] for w in two] == ["2", "3", "2", "3"]
    assert {w["env"]["OMP_NUM_THREADS"] for w in two} == {"4"}
    assert executors.local_workers(2, 0, cores=2) == [{"resources": {}, "env": {
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "KINETO_LOG_LEVEL": "6"}}] * 2


def test_a_local_cluster_on_a_machine_with_one_gpu_declares_it_on_one_worker():
    """The cluster as `grade --workers 2` makes it where torch sees one GPU (told here: no GPU is lent): one worker
    holds GPU=1, every worker has its share of threads and sees the GPU, and a GPU job runs on the one."""
    executor = executors.DaskExecutor(workers=2, gpus=1)
    try:
        info = executor.client.scheduler_info(n_workers=-1)["workers"]
        holders = [a for a, w in info.items() if (w.get("resources") or {}).get("GPU")]
        assert len(holders) == 1 and executor.gpu and "1 holding the GPU resource" in executor.name
        seen = executor.client.run(lambda: (os.environ.get("OMP_NUM_THREADS"), os.environ.get("CUDA_VISIBLE_DEVICES")))
        threads = str(max(1, (os.cpu_count() or 1) // 2))
        assert sorted(seen.values()) == [(threads, "0"), (threads, "0")]
        ran_on = executor.client.submit(lambda: __import__("distributed").get_worker().address, resources={"GPU": 1},
                                        pure=False).result(timeout=60)
        assert ran_on == holders[0]
    finally:
        executor.close()


def test_a_machine_that_cannot_start_cuda_in_the_sandbox_stops_grading_and_records_nothing(prepared, tmp_path_factory):
    """`grade` where the grader expects CUDA and the sandboxed worker cannot start it (here: a machine without one,
    told to expect it): one line naming the machine's problem and the fix, exit 2, no result kept or recorded."""
    course = copy_of(prepared, tmp_path_factory, "broken-machine")
    settings_file = course / "expect-cuda.json"
    settings_file.write_text(json.dumps({"grading": {"expect_cuda": True}}))
    env = dict(os.environ, AUTOGRADER_SETTINGS=str(settings_file))
    done = subprocess.run(grade_command(course, "--workers", "0"), capture_output=True, text=True, timeout=600,
                          env=env)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("Cannot grade:")]
    assert len(lines) == 1 and "settings.grading.expect_cuda is set, but CUDA does not start" in lines[0]
    assert "Nothing was scored" in lines[0] and "Traceback" not in done.stderr
    assert not finished_results(course / RESULTS) if (course / RESULTS).exists() else True
    report = load_report(course)
    assert not any(r.get("status") == "graded" for r in report.values())
