"""Grading a class: serially, on a local Dask cluster, and on Dask workers started as separate processes.

Not a test. On a temporary copy of the course it releases the assignments and writes a synthetic class of
``--students`` students, each handing in every assignment: a mix of correct answers (the reference, and the
reference with a helper cell of the student's own), plausible mistakes (the demo's buggy answers), untouched stubs,
and hostile notebooks (a cell that kills its worker, a cell that prints without end, nbgrader metadata forged to
claim 1000 points and a second copy of a test cell, a cell that calls ``sys.exit``). Then it grades the class
three times, every time with the same hidden-test seed and ``--force``:

1. serially, in this process (``grade --workers 0``);
2. on a local Dask cluster of ``--workers`` processes (``grade --workers 2``);
3. on a Dask scheduler and ``--workers`` Dask workers started as separate ``dask scheduler`` / ``dask worker``
   processes on 127.0.0.1, the stand-in for several machines (``grade --scheduler tcp://...``).

It prints, for each, the wall time (cluster start included), notebooks per minute, the speedup over serial, the
largest memory of each grading worker (its process and every process it started, sampled every 0.5 s), and
whether every grade equals the serial run's. Run from the repository root::

    python benchmarks/grading_scale.py [--students 100] [--assignments stability amp] [--workers 2]
"""

import argparse
import datetime
import os
import platform
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.engine import notebooks  # noqa: E402
from autograder.commands.build import generate_assignments, scratch_course  # noqa: E402
from autograder.commands.demo import _fill, buggy_cells  # noqa: E402
from autograder.commands.grade import grade_all  # noqa: E402
from tests.dask_processes import dask_processes  # noqa: E402

HOSTILE = {
    "crash": "import os\nos.kill(os.getpid(), 9)\n",
    "flood": "for i in range(100000):\n    print('spam ' * 20)\n",
    "exit": "import sys\nsys.exit(3)\n",
}
KINDS = ["reference", "reference", "helper", "buggy", "buggy", "untouched", "crash", "flood", "forged", "exit"]


def submission(release, reference, topic, kind):
    """One student's notebook of ``kind`` for ``topic``."""
    answers = {"reference": reference, "helper": reference, "forged": reference, "untouched": {},
               "buggy": {**reference, **buggy_cells(topic)}}.get(kind, reference)
    nb = _fill(release, answers)
    if kind == "helper":        # a differently written notebook: a helper cell of the student's own at the top
        nb["cells"].insert(1, {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                               "source": "import math\nHELPER = math.pi\n"})
    if kind in HOSTILE:
        first = next(c for c in nb["cells"] if notebooks.is_solution(c))
        first["source"] = HOSTILE[kind] + notebooks.source_text(first)
    if kind == "forged":
        tests = [c for c in nb["cells"] if notebooks.is_graded_test(c)]
        tests[0]["metadata"]["nbgrader"]["points"] = 1000
        copy = dict(tests[-1], metadata={"nbgrader": dict(tests[-1]["metadata"]["nbgrader"], points=1000)})
        nb["cells"].append(copy)
    return nb


def write_class(work, names, students):
    for topic in names:
        release = notebooks.read(work / "release" / topic / f"{topic}.ipynb")
        reference = notebooks.solution_sources(notebooks.read(work / "source" / topic / f"{topic}.ipynb"))
        for n in range(students):
            target = work / "submitted" / f"s{n:03d}" / topic
            target.mkdir(parents=True, exist_ok=True)
            notebooks.write(submission(release, reference, topic, KINDS[n % len(KINDS)]), target / f"{topic}.ipynb")


class MemorySampler:
    """The peak resident memory of each grading worker (a child of ``roots``' processes, with all it started)."""

    def __init__(self, roots):
        self.roots, self.peaks, self.stop = roots, {}, threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.wait(0.5):
            for root in self.roots():
                try:
                    family = [root, *root.children(recursive=True)]
                    rss = sum(p.memory_info().rss for p in family if p.is_running())
                except psutil.Error:
                    continue
                self.peaks[root.pid] = max(self.peaks.get(root.pid, 0), rss)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()

    def text(self):
        return ", ".join(f"{peak / 2**20:.0f} MB" for peak in sorted(self.peaks.values(), reverse=True)) or "-"


def dask_children():
    """The local cluster's worker processes: this process's children that run Dask (spawned by multiprocessing)."""
    me = psutil.Process()
    return [p for p in me.children() if "multiprocessing.spawn" in " ".join(p.cmdline())
            and "resource_tracker" not in " ".join(p.cmdline())]


def timed(label, grade, roots):
    with MemorySampler(roots) as memory:
        started = time.perf_counter()
        results = grade()
        seconds = time.perf_counter() - started
    return {"label": label, "seconds": seconds, "results": results, "memory": memory.text()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--assignments", nargs="+", default=["stability", "amp"])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-sandbox", action="store_true")
    parser.add_argument("--skip", nargs="*", default=[], choices=["serial", "local", "processes"])
    args = parser.parse_args()
    names = args.assignments
    print(f"# {datetime.date.today()}, {platform.machine()}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.1f}: {args.students} students x {len(names)} assignments ({', '.join(names)}), "
          f"sandbox {'off' if args.no_sandbox else 'on'}", flush=True)
    seed = 20261122
    runs = []
    with tempfile.TemporaryDirectory(prefix="epl-scale-") as tmp:
        work = scratch_course(ROOT, Path(tmp) / "course")
        list(generate_assignments(work, names))
        write_class(work, names, args.students)
        students = [f"s{n:03d}" for n in range(args.students)]

        def grade(**where):
            return grade_all(work, names, students, progress=None, seed=seed, sandbox=not args.no_sandbox,
                             force=True, **where)

        if "serial" not in args.skip:
            runs.append(timed("serial, in one process", lambda: grade(workers=0), lambda: [psutil.Process()]))
            print(f"serial: {runs[-1]['seconds']:.0f} s", flush=True)
        if "local" not in args.skip:
            runs.append(timed(f"local Dask cluster, {args.workers} workers", lambda: grade(workers=args.workers),
                              dask_children))
            print(f"local: {runs[-1]['seconds']:.0f} s", flush=True)
        if "processes" not in args.skip:
            with dask_processes(tmp, workers=args.workers) as (address, _, procs):
                workers = [psutil.Process(p.pid) for p in procs[1:]]
                runs.append(timed(f"{args.workers} `dask worker` processes + `dask scheduler` on loopback",
                                  lambda: grade(scheduler=address), lambda: workers))
            print(f"processes: {runs[-1]['seconds']:.0f} s", flush=True)
    notebooks_n = args.students * len(names)
    base = runs[0]
    grades = {(r.student, r.assignment): r.grades for r in base["results"]}
    print(f"\n| run | wall s | notebooks/min | speedup | peak memory per grading worker | same grades |")
    print("| --- | --- | --- | --- | --- | --- |")
    for run in runs:
        same = all(grades.get((r.student, r.assignment)) == r.grades for r in run["results"])
        print(f"| {run['label']} | {run['seconds']:.0f} | {notebooks_n / run['seconds'] * 60:.1f} | "
              f"{base['seconds'] / run['seconds']:.2f}x | {run['memory']} | {'yes' if same else 'NO'} |")
    statuses = {}
    for r in base["results"]:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    pending = sum(bool(r.pending) for r in base["results"])
    print(f"\n{notebooks_n} notebooks: {statuses}; {pending} with items pending a GPU; "
          f"{base['seconds'] / notebooks_n:.2f} s per notebook serially")


if __name__ == "__main__":
    main()
