"""How long the trusted grader takes for one student's eight notebooks, and where the time goes.

Not a test. On a temporary copy of the course it releases every assignment, submits the
reference solutions as one student, and grades them with ``grade_all`` (nbgrader's autograde
in this process, each notebook's code in a sandboxed worker, every check here), ``--runs``
times. It prints the seconds of each notebook and the total, and, for one notebook, the
split: starting the worker (importing torch in the sandbox), running the student's cells,
and the checks. Run from the repository root::

    python benchmarks/grading_time.py [--runs 2] [--no-sandbox]
"""

import argparse
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.engine import notebooks  # noqa: E402
from autograder.commands.build import generate_assignments, scratch_course, topics  # noqa: E402
from autograder.commands.demo import _fill  # noqa: E402
from autograder.commands.grade import grade_all  # noqa: E402


def one_class(work, names):
    for topic in names:
        release = notebooks.read(work / "release" / topic / f"{topic}.ipynb")
        reference = notebooks.solution_sources(notebooks.read(work / "source" / topic / f"{topic}.ipynb"))
        target = work / "submitted" / "reference" / topic
        target.mkdir(parents=True, exist_ok=True)
        notebooks.write(_fill(release, reference), target / f"{topic}.ipynb")


def split_of(topic, sandbox):
    """Seconds to start a worker, to run the reference notebook's cells, and to run the checks."""
    from autograder.engine.trusted_runner import (NotebookWorker, RemoteNamespace, grade_item, launcher_for,
                                                  unsandboxed_launcher)
    from autograder.checks import items_of

    os.environ["AUTOGRADER_GRADING"] = "1"
    launcher = launcher_for(True) if sandbox else unsandboxed_launcher
    nb = notebooks.read(ROOT / "source" / topic / f"{topic}.ipynb")
    with tempfile.TemporaryDirectory() as scratch:
        started = time.perf_counter()
        worker = NotebookWorker([], launcher, scratch)
        worker.live().request("cell", "pass", timeout=300)
        start_s = time.perf_counter() - started
        worker.cells = notebooks.code_cells(nb, topic)
        started = time.perf_counter()
        for _, source in worker.cells:
            worker.session.request("cell", source, timeout=300)
        cells_s = time.perf_counter() - started
        started = time.perf_counter()
        namespace = RemoteNamespace(worker)
        results = [grade_item(item, namespace, seed=1) for item in items_of(topic)]
        checks_s = time.perf_counter() - started
        worker.close()
    return start_s, cells_s, checks_s, sum(r.score for r in results)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--no-sandbox", action="store_true")
    args = parser.parse_args()
    names = topics(ROOT)
    print(f"# {datetime.date.today()}, {platform.machine()}, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}, sandbox {'off' if args.no_sandbox else 'on'}")
    totals, per_topic = [], {t: [] for t in names}
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="epl-bench-") as tmp:
            work = scratch_course(ROOT, Path(tmp) / "course")
            list(generate_assignments(work, names))
            one_class(work, names)
            started = time.perf_counter()
            results = grade_all(work, names, ["reference"], progress=None, seed=run, sandbox=not args.no_sandbox)
            totals.append(time.perf_counter() - started)
            for r in results:
                per_topic[r.assignment].append(r.seconds)
    print("| notebook | seconds (median of runs) |\n| --- | --- |")
    for topic, seconds in per_topic.items():
        print(f"| {topic} | {statistics.median(seconds):.1f} |")
    print(f"| **all eight** | **{statistics.median(totals):.1f}** (runs: {', '.join(f'{t:.1f}' for t in totals)}) |")
    print("\n| notebook | worker start | student's cells | checks | points |\n| --- | --- | --- | --- | --- |")
    for topic in names:
        start_s, cells_s, checks_s, score = split_of(topic, not args.no_sandbox)
        print(f"| {topic} | {start_s:.1f} | {cells_s:.1f} | {checks_s:.1f} | {score:g} |")


if __name__ == "__main__":
    main()
