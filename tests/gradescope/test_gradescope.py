"""The Gradescope bundle, built for every assignment and run as Gradescope would, where bubblewrap cannot work.

Once per session: the wheel set for this Python (``bundle.collect_wheels``, into the shared cache
``EPL_GRADESCOPE_WHEELS`` or ``~/.cache/epl-gradescope-wheels``), one bundle for every assignment (the course's) and
one for operators alone, and ``setup.sh`` run into a fresh
``/autograder/venv`` inside a container like Gradescope's (``outer.DockerLike``: real root, a seccomp filter that
refuses namespaces, the test's own ``/autograder``, ``/etc`` and ``/tmp``). Then ``run_autograder`` grades, as root
there: the reference of each assignment (full marks; the GPU item of amp waived; stability's is the run of the
notebook that writes the results, broadcasting's the late one), the demo's buggy student of each (the points
``grade`` gives the same cells with the same seed), and three hostile notebooks (one that writes the results, one
that reads the grader's files, one that hangs). After every run no
process of the worker's user is left. Each run's time and peak memory are printed (docs/gradescope.md's table).
"""

import json
import os
import shutil
import sys
import time
import zipfile
from pathlib import Path

import pytest

from autograder.checks import TOPICS as ALL_TOPICS
from autograder.checks import items_of
from autograder.commands.demo import buggy_cells
from autograder.engine import notebooks
from autograder.engine.jobs import grade_job_here, job_cells, source_map
from autograder.gradescope import bundle
from autograder.gradescope.fallback import USER
from autograder.gradescope.results import late_from_metadata
from autograder.settings import override
from tests.gradescope.outer import DockerLike
from tests.proving import ROOT, reference_cells, submission

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1800)]

TOPICS = [t for t in ALL_TOPICS if t not in bundle.NEEDS_LOOPBACK]   # every assignment Gradescope can grade, in order
# The demo's buggy student where the container's grading differs most from a sandboxed one (worker processes over tar
# shards, autocast, the profiler, timing): the reference of every assignment is graded above, and grade's path is the
# same code for the rest.
BUGGY = [t for t in TOPICS if t in ("operators", "dataloading", "amp", "memory")]
HOSTILE_TOPIC = "stability"
SHORT = {"call_timeout_s": 10, "grading": {"cell_timeout_s": 8, "submission_timeout_s": 25}}
RUN_TIMEOUT_S = 300
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"    # the container runs this machine's python3
SINGLE = "operators"                     # the bundle of one assignment


@pytest.fixture(scope="session")
def wheels():
    cache = Path(os.environ.get("EPL_GRADESCOPE_WHEELS", bundle.WHEEL_CACHE))
    started = time.perf_counter()
    found = bundle.collect_wheels(ROOT, cache, PYTHON)
    print(f"\nthe wheel set: {time.perf_counter() - started:.0f} s")
    return found


@pytest.fixture(scope="module")
def bundles(wheels, tmp_path_factory):
    """``{topic: (zip, topic)}``: the course's bundle (every assignment, with the wheels) for each topic, but
    ``SINGLE``'s own bundle (without the wheels: the same set, installed once) for ``SINGLE``."""
    out = tmp_path_factory.mktemp("bundles")
    started = time.perf_counter()
    options = {"wheels": wheels, "python": PYTHON, "gpu_items": "waive", "feedback": "after_due_date",
               "settings_values": {}}
    course = bundle.build_bundle(ROOT, TOPICS, out / "autograder.zip", **options)
    single = bundle.build_bundle(ROOT, SINGLE, out / f"autograder-{SINGLE}.zip", with_wheels=False, **options)
    print(f"\n2 bundles: {time.perf_counter() - started:.0f} s, the course's {course.stat().st_size / 2**20:.0f} MB")
    return {topic: (single if topic == SINGLE else course, topic) for topic in TOPICS}


def unpack_spec(zip_path, source):
    """The bundle's files but its wheels into ``source`` (the wheels are the same in every bundle: installed once)."""
    with zipfile.ZipFile(zip_path) as archive:
        for name in archive.namelist():
            if not name.startswith("wheels/"):
                archive.extract(name, source)
    for name in ("setup.sh", "run_autograder"):
        os.chmod(source / name, 0o755)


class Gradescope:
    """``/autograder`` (the test's directory) in a DockerLike container, set up once."""

    def __init__(self, base, course_bundle):
        self.root = base / "autograder"
        self.source = self.root / "source"
        self.source.mkdir(parents=True)
        with zipfile.ZipFile(course_bundle) as archive:
            archive.extractall(self.source)
        for name in ("setup.sh", "run_autograder"):
            os.chmod(self.source / name, 0o755)
        self.container = DockerLike(base, self.root)
        self.setup, self.setup_seconds, _ = self.container.run(["bash", "/autograder/source/setup.sh"], timeout=900)
        shutil.copy(self.source / "run_autograder", self.root / "run_autograder")
        self.uid = self.user_id()

    def user_id(self):
        for line in (self.container.etc / "passwd").read_text().splitlines():
            if line.startswith(f"{USER}:"):
                return int(line.split(":")[2])
        return None

    def grade(self, target, notebook, metadata=None, settings=None, name=None):
        """results.json of ``run_autograder`` for ``notebook`` (a dict, or bytes as uploaded), uploaded as
        ``<topic>.ipynb`` (or ``name``); ``target``: ``(zip, topic)``."""
        zip_path, topic = target
        shutil.rmtree(self.source / "notebooks", ignore_errors=True)
        unpack_spec(zip_path, self.source)
        if settings is not None:
            config = json.loads((self.source / "gradescope.json").read_text())
            config["settings"] = settings
            (self.source / "gradescope.json").write_text(json.dumps(config))
        for folder in ("submission", "results"):
            shutil.rmtree(self.root / folder, ignore_errors=True)
            (self.root / folder).mkdir()
        data = notebook if isinstance(notebook, bytes) else json.dumps(notebook).encode()
        (self.root / "submission" / (name or f"{topic}.ipynb")).write_bytes(data)
        (self.root / "submission_metadata.json").write_text(json.dumps(metadata or {}))
        done, seconds, peak = self.container.run(["/autograder/run_autograder"], timeout=RUN_TIMEOUT_S,
                                                 sample_memory=True)
        results = self.root / "results" / "results.json"
        return Run(done, seconds, peak, json.loads(results.read_text()) if results.exists() else None,
                   survivors=self.survivors())

    def survivors(self):
        from autograder.gradescope.fallback import user_processes
        return user_processes(self.uid) if self.uid is not None else []


class Run:
    def __init__(self, done, seconds, peak, results, survivors):
        self.done, self.seconds, self.peak_mb, self.results, self.survivors = done, seconds, peak, results, survivors

    def scores(self):
        return {t["name"]: (t["score"], t["max_score"]) for t in self.results["tests"]}

    def __repr__(self):
        return f"rc {self.done.returncode}, {self.seconds:.1f} s, output:\n{self.done.stdout[-3000:]}"


@pytest.fixture(scope="module")
def gradescope(bundles, tmp_path_factory):
    return Gradescope(tmp_path_factory.mktemp("gradescope"), bundles[TOPICS[0]][0])


reference_answers, filled = reference_cells, submission


# ---------------------------------------------------------------- the container, the bundles and setup.sh

def test_bwrap_cannot_make_a_sandbox_in_the_container(gradescope):
    """As in Gradescope's Docker: bwrap exits non-zero, and the grader's probe says no sandbox can be made."""
    bwrap, _, _ = gradescope.container.run(["bwrap", "--unshare-user", "--dev-bind", "/", "/", "true"], timeout=60)
    assert bwrap.returncode != 0, bwrap.stdout
    probe, _, _ = gradescope.container.run(
        ["/autograder/venv/bin/python", "-c", "from autograder.sandbox import bubblewrap as sandbox\ntry:\n    sandbox.probe()\n"
         "except sandbox.SandboxUnavailable as e:\n    print('UNAVAILABLE', e)\nelse:\n    print('AVAILABLE')"],
        timeout=120)
    assert "UNAVAILABLE" in probe.stdout, probe.stdout


def test_the_bundles_hold_what_grading_needs_and_no_more(bundles, wheels):
    """The course's bundle holds every wheel of the set, torch's CPU build and ours among them, and nothing grading
    never imports (JupyterLab, notebook, nbgrader, Dask, JupyterHub, Playwright, the PostgreSQL driver, pytest,
    matplotlib); both bundles pin the set alike in requirements.txt; every assignment's notebook and graded cells."""
    course, _ = bundles[TOPICS[0]]
    single, _ = bundles[SINGLE]
    assert bundle.wheel_names(course) == sorted(wheels) and not bundle.wheel_names(single)
    assert any(n.startswith("torch-2.13.0+cpu") for n in wheels) and any(n.startswith("effective_pytorch_lab-")
                                                                          for n in wheels)
    names = {n.split("-")[0].lower() for n in wheels}
    assert not names & {"jupyterlab", "notebook", "nbgrader", "dask", "distributed", "jupyterhub", "playwright",
                        "psycopg", "psycopg_binary", "pytest", "matplotlib", "hypothesis"}, names
    pins = [zipfile.ZipFile(path).read("requirements.txt").decode().split() for path in (course, single)]
    assert pins[0] == pins[1] and len(pins[0]) == len(wheels) and "torch==2.13.0+cpu" in pins[0]
    with zipfile.ZipFile(course) as archive:
        listed = set(archive.namelist())
        config = json.loads(archive.read("gradescope.json"))
        maps = json.loads(archive.read("source_map.json"))
    assert {"setup.sh", "run_autograder", "README.md", "gradescope.json", "source_map.json", "requirements.txt",
            *(f"notebooks/{topic}.ipynb" for topic in TOPICS)} <= listed
    assert config["assignments"] == TOPICS and config["python"] == PYTHON and sorted(maps) == sorted(TOPICS)
    size_mb = course.stat().st_size / 2**20
    required_mb = sum(path.stat().st_size for name, path in wheels.items()
                      if name.startswith(("torch-", "opencv_python_headless-", "numpy-"))) / 2**20
    print(f"\nthe course's bundle: {size_mb:.0f} MB, {len(wheels)} wheels; torch, OpenCV, NumPy {required_mb:.0f} MB")
    assert size_mb < required_mb + 20, "more than 20 MB beyond the three wheels grading cannot do without"


def test_setup_installs_from_the_bundle_alone(gradescope):
    assert gradescope.setup.returncode == 0, gradescope.setup.stdout[-3000:]
    assert gradescope.uid is not None and gradescope.uid != 0, "setup.sh made no worker user"
    print(f"\nsetup.sh: {gradescope.setup_seconds:.0f} s")


def test_the_worker_user_cannot_read_the_grader(gradescope):
    """As the worker's user, in the container: the bundle and the installed grader (its oracles) are refused; torch,
    which the worker imports from the same venv, is not (the control)."""
    packages = "/autograder/venv/lib/python3.11/site-packages"
    site = f"{packages}/autograder"
    probe = ("import os\nfor p in ['/autograder/source/source_map.json', '/autograder/source/wheels', "
             f"'{site}/oracles/stability.py', '{site}/__init__.py', '{packages}/torch/__init__.py']:\n"
             "    try:\n        os.listdir(p) if os.path.isdir(p) else open(p).read(1)\n        print('READ', p)\n"
             "    except PermissionError:\n        print('DENIED', p)\n")
    done, _, _ = gradescope.container.run(
        ["setpriv", f"--reuid={gradescope.uid}", f"--regid={gradescope.uid}", "--clear-groups",
         "/autograder/venv/bin/python", "-I", "-c", probe], timeout=60)
    assert done.stdout.count("DENIED") == 4 and done.stdout.count("READ") == 1, done.stdout
    assert "READ /autograder/venv/lib/python3.11/site-packages/torch/__init__.py" in done.stdout


# ---------------------------------------------------------------- the honest notebooks

def assert_full_marks(run, topic, *, late_fraction=1.0):
    """``run`` graded the reference of ``topic``: every item at full marks (a GPU item waived: 0 of 0), the score
    their sum (less the late penalty's ``late_fraction``), in the fallback sandbox, and nothing left behind."""
    print(f"\n{topic}: run_autograder {run.seconds:.1f} s, peak {run.peak_mb:.0f} MB (sum of PSS)")
    assert run.results is not None, run
    gpu = {item.id for item in items_of(topic) if item.needs}
    expected = {item.id: (0.0, 0.0) if item.id in gpu else (item.points, item.points) for item in items_of(topic)}
    assert run.scores() == expected, f"{run.scores()}\n{run.results.get('output')}"
    total = sum(item.points for item in items_of(topic) if item.id not in gpu)
    assert run.results["score"] == (total if late_fraction == 1 else pytest.approx(total * late_fraction)), \
        run.results["output"]
    assert "fallback sandbox" in run.results["extra_data"]["sandbox"], run.results["extra_data"]
    assert all(t["visibility"] == "after_due_date" for t in run.results["tests"])
    assert isinstance(run.results["extra_data"]["seed"], int)
    assert not run.survivors, f"processes of the worker's user outlive run_autograder: {run.survivors}"


# The references of two assignments are graded by the runs that need them anyway: stability's by the notebook that
# tries to write its own results (its answers are the reference's), broadcasting's by the late one.
REFERENCE_ELSEWHERE = (HOSTILE_TOPIC, "broadcasting")


@pytest.mark.parametrize("topic", [t for t in TOPICS if t not in REFERENCE_ELSEWHERE])
def test_the_reference_gets_full_marks(gradescope, bundles, topic):
    assert_full_marks(gradescope.grade(bundles[topic], filled(topic, reference_answers(topic))), topic)


@pytest.mark.parametrize("topic", BUGGY)
def test_the_buggy_student_gets_what_grade_gives(gradescope, bundles, topic):
    nb = filled(topic, {**reference_answers(topic), **buggy_cells(topic)})
    run = gradescope.grade(bundles[topic], nb)
    assert run.results is not None, run
    seed = run.results["extra_data"]["seed"]
    cells = job_cells(json.loads(json.dumps(nb)), topic, source_map(ROOT, topic))
    with override({"grading": {"gpu_items": "fail"}}):
        here = grade_job_here(topic, cells, seed=seed, sandbox=True)   # grade's path, bwrap's sandbox
    gpu = {item.id for item in items_of(topic) if item.needs}     # waived in these bundles: 0 of 0
    expected = {i["item"]: (0.0, 0.0) if i["item"] in gpu else (i["score"], i["max_score"]) for i in here["items"]}
    assert run.scores() == expected
    assert 0 < run.results["score"] < sum(item.points for item in items_of(topic))


def test_a_missing_notebook_scores_zero_saying_why(gradescope, bundles):
    run = gradescope.grade(bundles["operators"], b'{"cells": [', name="notes.txt")
    assert run.results["score"] == 0 and "No notebook named operators.ipynb" in run.results["output"]


# ---------------------------------------------------------------- hostile notebooks

WRITE_RESULTS = r'''
import json, os, subprocess, sys
FORGED = json.dumps({"score": 1000, "output": "FORGED", "tests": []})
for path in ["/autograder/results/results.json", "/autograder/results/forged.json", "/autograder/results.json",
             "/tmp/results.json", "../results.json"]:
    try:
        with open(path, "w") as handle:
            handle.write(FORGED)
    except OSError:
        pass
try:
    os.symlink("/tmp/forged", "/autograder/results/results.json")
except OSError:
    pass
# A detached helper that keeps trying for a minute, after grading has ended.
subprocess.Popen([sys.executable, "-c", "import time, os\nfor _ in range(600):\n    time.sleep(0.1)\n    try:\n"
                  "        open('/autograder/results/results.json', 'w').write('FORGED')\n    except OSError:\n"
                  "        pass"], start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL)
'''

READ_SOURCE = r'''
import glob, os
# The grader's oracles and the bundle: run whatever answers they hold.
stolen = ""
for pattern in ["/autograder/source/**/*", "/autograder/venv/lib/python3.11/site-packages/autograder/oracles/*.py",
                "/autograder/venv/lib/python3.11/site-packages/autograder/**/*.py", "/autograder/submission/*"]:
    for path in glob.glob(pattern, recursive=True):
        try:
            with open(path) as handle:
                stolen += handle.read()
        except (OSError, UnicodeDecodeError):
            pass
namespace = {}
try:
    exec(stolen, namespace)
except Exception:
    pass
stable_softmax = namespace.get("stable_softmax")
softmax_cross_entropy = namespace.get("softmax_cross_entropy")
print("STOLEN", len(stolen))
'''

HANG = r'''
import signal, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
while True:
    time.sleep(1)
'''


def hostile(topic, first_cell_code, answers=None):
    nb = filled(topic, answers or {})
    first = next(i for i, c in enumerate(nb["cells"]) if notebooks.is_solution(c))
    nb["cells"][first]["source"] = first_cell_code + "\n" + notebooks.source_text(nb["cells"][first])
    return nb


def test_a_submission_cannot_write_its_results(gradescope, bundles):
    """The reference's answers after a first cell that forges results.json every way it can: full marks, the
    results its own (this run is also stability's reference run)."""
    run = gradescope.grade(bundles[HOSTILE_TOPIC], hostile(HOSTILE_TOPIC, WRITE_RESULTS, reference_answers(
        HOSTILE_TOPIC)))
    assert_full_marks(run, HOSTILE_TOPIC)
    assert "FORGED" not in json.dumps(run.results)
    assert sorted(os.listdir(gradescope.root / "results")) == ["results.json"]
    assert not (gradescope.root / "results.json").exists()
    assert not run.survivors, f"the helper outlives run_autograder: {run.survivors}"
    assert not (gradescope.container.tmp / "results.json").exists(), "its file in /tmp was left behind"


def test_a_submission_cannot_read_the_grader(gradescope, bundles):
    run = gradescope.grade(bundles[HOSTILE_TOPIC], hostile(HOSTILE_TOPIC, READ_SOURCE))
    assert run.results is not None, run
    earned = {name: score for name, (score, _) in run.scores().items() if score}
    assert not earned, f"points from what it read: {earned}"
    oracle = (ROOT / "autograder" / "oracles" / "__init__.py").read_text()
    assert "STOLEN" not in json.dumps(run.results) and oracle[:200] not in json.dumps(run.results)


def test_a_hanging_submission_is_stopped_in_time(gradescope, bundles):
    """Its first answer cell hangs (SIGINT ignored) before defining stable_softmax: the cell is stopped at the cell
    timeout, the softmax items score 0 saying why; the other answers are the reference's (they may earn their points
    or run out of the notebook's 25 s budget: either way run_autograder ends in time and nothing is left)."""
    run = gradescope.grade(bundles[HOSTILE_TOPIC], hostile(HOSTILE_TOPIC, HANG, reference_answers(HOSTILE_TOPIC)),
                           settings=SHORT)
    assert run.results is not None, run
    scores = run.scores()
    softmax = [item.id for item in items_of(HOSTILE_TOPIC) if item.id.startswith("softmax_")]
    assert softmax and all(scores[name][0] == 0 for name in softmax), scores
    assert "cell stable_softmax ran longer than" in run.results["output"], run.results["output"]
    assert run.seconds < SHORT["grading"]["submission_timeout_s"] + 60, f"{run.seconds:.0f} s"
    assert not run.survivors


def test_late_work_loses_what_the_policy_says(gradescope, bundles):
    """Two days and one hour late, no extension, 10% per started day: 30% of the points earned, said in output.
    Every item keeps its full marks (this run is also broadcasting's reference run); the penalty is on the total."""
    metadata = {"created_at": "2026-11-24T12:00:00+00:00", "assignment": {"due_date": "2026-11-22T11:00:00+00:00"},
                "users": [{"assignment": {"due_date": "2026-11-22T11:00:00+00:00"}}]}
    late = gradescope.grade(bundles["broadcasting"], filled("broadcasting", reference_answers("broadcasting")),
                            metadata=metadata, settings={"deadlines": {"penalty": {"per_day_percent": 10}}})
    assert_full_marks(late, "broadcasting", late_fraction=0.7)
    assert "late by 2 d 1 h: -30%" in late.results["output"], late.results["output"]


def test_an_extension_is_the_submitters_own_due_date():
    """``users[].assignment.due_date`` past the submission time: on time; Gradescope's times with offsets."""
    metadata = {"created_at": "2026-11-24T04:00:00-08:00", "assignment": {"due_date": "2026-11-22T11:00:00+00:00"},
                "users": [{"assignment": {"due_date": "2026-11-25T00:00:00+00:00"}}]}
    late = late_from_metadata(metadata)
    assert late["seconds_late"] == 0 and late["extended"] and late["due"] == "2026-11-25T00:00:00+00:00"
    metadata["users"] = []
    assert late_from_metadata(metadata)["seconds_late"] == (2 * 24 + 1) * 3600
    assert late_from_metadata({"created_at": "2026-11-24T12:00:00Z"}) is None
