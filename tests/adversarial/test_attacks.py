"""Hostile submissions graded by the real grader: each gets exactly what its real answers deserve, and nobody else
loses anything.

One temporary course, one ``grade_all`` over every attack in ``attacks.py`` (both assignments), with an honest
student graded first (``honest_before``) and one graded last (``honest_after``), so that an attack that reaches
forward (files, the gradebook, the report, processes left behind) shows on the student after it and one that
reaches back shows on the student before it. The grading imports a copy of the kit (``autograder/`` and
``solutions/``, put first on ``PYTHONPATH``), so that an attack that writes into the kit writes into the copy.

If ``grade_all`` raises on a submission, the run records it (that attack's test fails on it), puts the last
readable report back and grades the students after it, so that one crash does not hide every other outcome.

A second, small course grades a resubmission that hangs after a first, correct submission: two passes.

These tests are slow (minutes: every submission is a real nbgrader autograde, and a few attacks hold the
grader until its limits stop them). They are marked ``e2e``; an ``adversarial`` marker would need declaring in
pyproject.toml (``--strict-markers``), so it is not used here.
"""

import contextlib
import csv
import json
import os
import re
import secrets
import shutil
import signal
import socket
import sys
import time
from dataclasses import asdict

import pytest
import torch

from autograder.checks import items_of
from autograder.commands.build import generate_assignments, scratch_course
from autograder.commands.export import export_csv, export_gradescope
from autograder.commands.grade import grade_all
from autograder.course.grading import load_report, read_grades
from autograder.settings import override
from tests.adversarial.attacks import (ATTACKS, BY_NAME, HANG_FOREVER, MARKER, PORT, GradingRun, build_notebook,
                                       changed_files, full_grades, gradebook_grades, honest_submission, processes,
                                       protected_files, submit, write_submission)
from tests.proving import ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(3600)]

TOPICS = ["stability", "operators"]
HONEST = ("honest_before", "honest_after")
SEED = 424242
# Short limits: a call of student code is stopped after 10 s, a cell after 10 s, a whole submission after 75 s (an
# honest one takes 8 s on a quiet 2-core machine, 20-35 s on a busy one).
LIMITS = {"call_timeout_s": 10, "grading": {"cell_timeout_s": 10, "submission_timeout_s": 75}}
SETTLE_S = 6     # how long after grading the aftermath waits before it looks (daemons, sleepers, late writers)
# ADVERSARIAL_ONLY=name,name grades only those attacks (with the honest students); the others' tests are skipped.
ONLY = [name for name in os.environ.get("ADVERSARIAL_ONLY", "").split(",") if name]
SELECTED = [attack for attack in ATTACKS if not ONLY or attack.name in ONLY]


# ---------------------------------------------------------------- helpers others can reuse

def course_with_assignments(base, topics):
    """A temporary course with ``topics`` released (nbgrader generate_assignment)."""
    course = scratch_course(ROOT, base)
    list(generate_assignments(course, topics))
    return course


def submit_honest(course, student, topics):
    """``student`` hands in the reference answers for each of ``topics``."""
    return [honest_submission(course, student, topic) for topic in topics]


def expected_grades(topic, deserved):
    """``{item: [score, max]}``: the item's points where ``deserved`` says so, else 0 (an item that needs a GPU is
    pending, 0, on a machine without one)."""
    grades = {}
    for item in items_of(topic):
        pending = bool(item.needs) and not torch.cuda.is_available()
        grades[item.id] = [item.points if deserved[item.id] and not pending else 0.0, item.points]
    return grades


def gpu_pending(topic):
    return sorted(item.id for item in items_of(topic) if item.needs) if not torch.cuda.is_available() else []


@contextlib.contextmanager
def graded_with_a_copy_of_the_kit(dest):
    """Copy the kit's importable code and its reference solutions to ``dest`` and put the copy first on
    ``PYTHONPATH`` for the block: everything grading starts (nbgrader, kernels, workers) imports the copy."""
    dest.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "autograder", dest / "autograder", ignore=ignore)
    shutil.copytree(ROOT / "solutions", dest / "solutions", ignore=ignore)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", str(dest))
        yield dest


def kill_leftovers(marker, course):
    for pid, _ in processes(marker=marker, under=course):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _read_report(course):
    """The grades in force (``grading.load_report``: the records in force with the gradebook's scores), or None
    when they cannot be read now."""
    try:
        return load_report(course)
    except Exception:  # noqa: BLE001 - an attack may have left them unreadable: the aftermath says so
        return None


def grade_once_going_on_after_crashes(course, topics, students, seed):
    """One ``grade_all`` over ``students``; if it raises, note on which submission and grade the students after
    that one (a second call). Returns ``(records, crashes)``."""
    last_good = {}

    def progress(*args, **kwargs):
        report = _read_report(course)
        if report is not None:
            last_good.clear()
            last_good.update(report)

    records, crashes, remaining = {}, [], list(students)
    while remaining:
        try:
            results = grade_all(course, topics, remaining, progress=progress, seed=seed)
        except Exception as error:  # noqa: BLE001 - an attack made the grader raise: note it and go on
            pairs = [f"{s}/{t}" for s in remaining for t in topics]
            done = [p for p in pairs if p in last_good]
            records.update({p: last_good[p] for p in done})
            culprit = next((p for p in pairs if p not in last_good), pairs[-1])
            student, topic = culprit.split("/")
            crashes.append({"student": student, "topic": topic, "error": f"{type(error).__name__}: {error}"})
            remaining = remaining[remaining.index(student) + 1:]
            continue
        records.update({f"{r.student}/{r.assignment}": asdict(r) for r in results})
        break
    return records, crashes


def _listener():
    """A socket on 127.0.0.1 that the network attacks try to reach; what reached it is read by :func:`_drain`."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.setblocking(False)
    return listener


def _drain(listener):
    got = []
    while True:
        try:
            connection, address = listener.accept()
        except (BlockingIOError, OSError):
            return got
        connection.settimeout(1)
        try:
            data = connection.recv(4096)
        except OSError:
            data = b""
        connection.close()
        got.append((address, data.decode(errors="replace")))


# ---------------------------------------------------------------- the shared grading run

@pytest.fixture(scope="module")
def main_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("adversarial")
    course = course_with_assignments(base / "course", TOPICS)
    marker = f"advmark{os.getpid()}x{secrets.token_hex(4)}"
    listener = _listener()
    tokens = {MARKER: marker, PORT: listener.getsockname()[1]}
    students = [HONEST[0], *(attack.name for attack in SELECTED), HONEST[1]]
    for student in HONEST:
        submit_honest(course, student, TOPICS)
    for attack in SELECTED:
        submit(course, attack, tokens)
    try:
        with graded_with_a_copy_of_the_kit(base / "kit") as kit:
            run = GradingRun(course=course, kit=kit, topics=TOPICS, students=students, marker=marker,
                             fingerprints=protected_files(course, kit))
            started = time.perf_counter()
            with override(LIMITS):
                run.records, run.crashes = grade_once_going_on_after_crashes(course, TOPICS, students, SEED)
            run.seconds = time.perf_counter() - started
            run.report = _read_report(course) or {}
            time.sleep(SETTLE_S)
            run.survivors = processes(marker=marker, under=course)
            run.connections = _drain(listener)
        yield run
    finally:
        listener.close()
        kill_leftovers(marker, course)


def _grades_text(grades):
    return ", ".join(f"{k} {s:g}/{m:g}" for k, (s, m) in grades.items())


@pytest.mark.parametrize("attack", ATTACKS, ids=lambda a: a.name)
def test_attack_gets_what_its_answers_deserve_and_harms_nobody(main_run, attack):
    """Its grades are what its real answers deserve (full points or 0 per item); the report says what was stopped;
    nothing it did outlives its grading (the attack's aftermath)."""
    if attack not in SELECTED:
        pytest.skip("not in ADVERSARIAL_ONLY")
    failures = []
    for crash in main_run.crashes:
        if crash["student"] == attack.name:
            failures.append(f"grade_all raised while grading it: {crash['error']}")
    record = main_run.record(attack.name, attack.topic)
    expected = expected_grades(attack.topic, attack.deserved)
    if record is None:
        failures.append("it has no grading record")
    else:
        got = record["grades"]
        if got != expected:
            wrong = {k: (got.get(k), expected.get(k)) for k in sorted(set(got) | set(expected))
                     if got.get(k) != expected.get(k)}
            score, deserved = sum(s for s, _ in got.values()), sum(s for s, _ in expected.values())
            failures.append(f"scored {score:g} (deserves {deserved:g} of {sum(m for _, m in expected.values()):g}): "
                            + "; ".join(f"{k} got {g} deserves {e}" for k, (g, e) in wrong.items()))
        said = list(record.get("problems", [])) + list(record.get("messages", {}).values())
        if (attack.reported or not all(attack.deserved.values())) and not said:
            failures.append("the report lists no problem and no check message for it")
        if attack.reported and not any(re.search(attack.reported, text) for text in said):
            failures.append(f"no problem or message matches {attack.reported!r}: {said[:3]}")
    if attack.aftermath:
        try:
            attack.aftermath(main_run)
        except AssertionError as error:
            failures.append(f"aftermath: {error}")
    assert not failures, f"{attack.name} ({attack.what}):\n  " + "\n  ".join(failures)


@pytest.mark.parametrize("topic", TOPICS)
@pytest.mark.parametrize("student", HONEST)
def test_honest_students_keep_full_marks(main_run, student, topic):
    """In what grade_all returned, in the grades in force (as grading left them) and in nbgrader's gradebook, with no
    problem reported (items that need a GPU are pending on a machine without one)."""
    full = expected_grades(topic, {item.id: True for item in items_of(topic)})
    record = main_run.record(student, topic)
    assert record is not None, f"{student}/{topic} was never graded"
    failures = []
    if record["grades"] != full:
        failures.append(f"as graded: {_grades_text(record['grades'])}")
    if record["pending"] != gpu_pending(topic) or record["problems"]:
        failures.append(f"pending {record['pending']}, problems {record['problems']}")
    saved = main_run.report.get(f"{student}/{topic}", {}).get("grades")
    if saved != full:
        failures.append(f"in the grades in force: {saved and _grades_text(saved)}")
    book = gradebook_grades(main_run.course, student, topic)
    if book not in (full, full_grades(topic)):
        failures.append(f"in nbgrader's gradebook: {_grades_text(book)}")
    assert not failures, f"{student}/{topic}:\n  " + "\n  ".join(failures)


def test_the_batch_goes_on_and_records_every_submission(main_run):
    assert not main_run.crashes, f"grade_all raised: {main_run.crashes}"
    missing = [f"{s}/{t}" for s in main_run.students for t in TOPICS if f"{s}/{t}" not in main_run.report]
    assert not missing, f"no record in force for {missing}"


def test_every_notebook_is_graded_once_on_the_cells_nbgrader_reads(main_run):
    """The job a grading worker runs reads each hostile notebook (forged metadata, edited locked cells, ...) as
    nbgrader's own sanitizing steps do: its verdicts are written as they are, never graded a second time."""
    again = [key for key, record in main_run.report.items()
             if any("graded again here" in p for p in record.get("problems", []))]
    assert not again, f"graded twice (the worker read other cells than nbgrader): {again}"


def test_no_process_outlives_grading(main_run):
    """Seconds after grading, no process works in the course directory or carries the run's marker."""
    assert not main_run.survivors, f"{len(main_run.survivors)} processes survive: {main_run.survivors[:5]}"


def test_no_submission_changes_the_kit_the_config_or_other_submissions(main_run):
    assert not changed_files(main_run), f"changed: {changed_files(main_run)}"


# ---------------------------------------------------------------- a resubmission that hangs

@pytest.fixture(scope="module")
def resubmission(tmp_path_factory):
    """``resubmitter`` hands in the reference (graded: full marks), then a notebook whose first cell hangs forever
    (SIGINT ignored, every other answer the stub), regraded. Returns both results, the report and the exports."""
    base = tmp_path_factory.mktemp("resubmission")
    course = course_with_assignments(base / "course", ["stability"])
    submit_honest(course, "resubmitter", ["stability"])
    try:
        with graded_with_a_copy_of_the_kit(base / "kit"), override(LIMITS):
            (first,) = grade_all(course, ["stability"], ["resubmitter"], progress=None, seed=SEED)
            write_submission(course, "resubmitter", "stability",
                             build_notebook(course, "stability", {"stable_softmax": HANG_FOREVER}))
            (second,) = grade_all(course, ["stability"], ["resubmitter"], progress=None, seed=SEED)
        (csv_path,) = export_csv(course, base / "grades.csv", ["stability"])
        rows = {r["student"]: r for r in csv.DictReader(open(csv_path, encoding="utf-8"))}
        export_gradescope(course, base / "gradescope", ["stability"])
        gradescope = json.loads((base / "gradescope" / "resubmitter" / "stability" / "results.json").read_text())
        yield {"first": first, "second": second, "report": _read_report(course) or {}, "csv": rows.get("resubmitter"),
               "gradescope": gradescope, "gradebook": read_grades(course, "resubmitter", "stability")}
    finally:
        kill_leftovers(None, course)   # nothing carries a marker here: only what still works in the course


def test_hanging_resubmission_scores_zero_not_the_stale_full_score(resubmission):
    first, second = resubmission["first"], resubmission["second"]
    full = expected_grades("stability", {item.id: True for item in items_of("stability")})
    zero = expected_grades("stability", {item.id: False for item in items_of("stability")})
    assert first.grades == full, f"the first, correct submission: {_grades_text(first.grades)}"
    assert second.grades == zero, f"the hanging resubmission, as graded: {_grades_text(second.grades)}"
    assert second.problems, "the report says nothing about the hang"
    assert second.seconds < LIMITS["grading"]["submission_timeout_s"] + 20, f"{second.seconds:.0f} s"
    record = resubmission["report"]["resubmitter/stability"]
    assert record["grades"] == zero, f"the grades in force: {_grades_text(record['grades'])}"
    row = resubmission["csv"]
    assert row["score"] == "0" and all(row[item.id] == "0" for item in items_of("stability")), f"CSV: {row}"
    gradescope = resubmission["gradescope"]
    assert gradescope["score"] == 0 and all(t["score"] == 0 for t in gradescope["tests"]), f"Gradescope: {gradescope}"


def test_hanging_resubmission_leaves_no_stale_full_score_in_the_gradebook(resubmission):
    """nbgrader's own gradebook (what its formgrader and `nbgrader export` show) does not keep the first score."""
    book = resubmission["gradebook"]
    assert sum(s for s, _ in book.values()) == 0, f"nbgrader's gradebook: {_grades_text(book)}"


# ---------------------------------------------------------------- the same attacks against the fallback sandbox

# The attacks that test the sandbox itself (files, processes, network, environment, the kit), graded again with the
# fallback sandbox of a Gradescope bundle (an unprivileged user, no namespaces: gradescope/fallback.py) inside
# a container that shows this machine's Python to that user (tests/gradescope/outer.py). docs/security.md, "The fallback
# sandbox", lists what it cannot stop; none of these attacks needs it (each is stopped, and tested so).
FALLBACK_ATTACKS = ["network", "sleepers", "daemon", "kill_grader", "read_seed", "steal_solutions_file",
                    "checks_file_append"]
FALLBACK_TOPICS = ["stability"]
FALLBACK_UID_RANGE = range(61000, 62000)   # a uid with no user and no process on this machine: nothing to change


def free_uids(count=2):
    """Uids no user has and no process runs as (the fallback's users: the student's worker and the clean worker; the
    host's /etc/passwd stays as it is)."""
    import pwd

    from autograder.gradescope.fallback import user_processes
    found = []
    for uid in FALLBACK_UID_RANGE:
        try:
            pwd.getpwuid(uid)
        except KeyError:
            if not user_processes(uid):
                found.append(uid)
                if len(found) == count:
                    return found
    pytest.skip("no free uids in 61000-61999 for the fallback's users")


@pytest.fixture(scope="module")
def fallback_run(tmp_path_factory):
    """``FALLBACK_ATTACKS`` between two honest students, graded in a subprocess with the fallback forced
    (``use_fallback(..., forced=True)``), in a ``DockerLike`` container only so that the fallback's user can run this
    machine's Python (under /root, mode 0700 here); the aftermath is looked at from here, as for the main run."""
    from autograder.gradescope.fallback import end_user_processes
    from tests.gradescope.outer import DockerLike

    base = tmp_path_factory.mktemp("adversarial-fallback")
    course = course_with_assignments(base / "course", FALLBACK_TOPICS)
    marker = f"advfb{os.getpid()}x{secrets.token_hex(4)}"
    listener = _listener()
    tokens = {MARKER: marker, PORT: listener.getsockname()[1]}
    attacks = [BY_NAME[name] for name in FALLBACK_ATTACKS]
    students = [HONEST[0], *(attack.name for attack in attacks), HONEST[1]]
    for student in HONEST:
        submit_honest(course, student, FALLBACK_TOPICS)
    for attack in attacks:
        submit(course, attack, tokens)
    uid, clean_uid = free_uids()
    out = base / "fallback.json"
    try:
        with graded_with_a_copy_of_the_kit(base / "kit") as kit:
            run = GradingRun(course=course, kit=kit, topics=FALLBACK_TOPICS, students=students, marker=marker,
                             fingerprints=protected_files(course, kit))
            container = DockerLike(base / "container", own_tmp=False, deny_namespaces=False)
            done, run.seconds, _ = container.run(
                [sys.executable, "-m", "tests.gradescope.adversarial_fallback", str(course), str(out), str(uid),
                 str(clean_uid), str(SEED), ",".join(FALLBACK_TOPICS), ",".join(students)],
                timeout=900, env=[f"PYTHONPATH={kit}{os.pathsep}{ROOT}"], cwd=ROOT)
            assert done.returncode == 0 and out.exists(), done.stdout[-3000:]
            found = json.loads(out.read_text(encoding="utf-8"))
            run.records, run.crashes = found["records"], found["crashes"]
            run.report = _read_report(course) or {}
            time.sleep(SETTLE_S)
            run.survivors = processes(marker=marker, under=course)
            run.connections = _drain(listener)
            run.uid_survivors = end_user_processes(uid) + end_user_processes(clean_uid)
        print(f"\nthe fallback run: {len(students)} submissions in {run.seconds:.0f} s")
        yield run
    finally:
        listener.close()
        kill_leftovers(marker, course)


@pytest.mark.parametrize("attack", [BY_NAME[name] for name in FALLBACK_ATTACKS], ids=lambda a: a.name)
def test_attack_against_the_fallback_sandbox(fallback_run, attack):
    """What the main run asks of each attack, asked again with the fallback sandbox doing the sandbox's work."""
    test_attack_gets_what_its_answers_deserve_and_harms_nobody(fallback_run, attack)


@pytest.mark.parametrize("student", HONEST)
def test_honest_students_keep_full_marks_under_the_fallback(fallback_run, student):
    full = expected_grades("stability", {item.id: True for item in items_of("stability")})
    record = fallback_run.record(student, "stability")
    assert record is not None and record["grades"] == full and not record["problems"], record


def test_nothing_of_the_fallback_user_outlives_grading(fallback_run):
    assert not fallback_run.crashes, fallback_run.crashes
    assert fallback_run.uid_survivors == 0, f"{fallback_run.uid_survivors} processes of the fallback's user survived"


def test_the_fallback_graded_every_submission(fallback_run):
    """Each verdict record says which bound held the worker's memory: the fallback's words, for every item (so the
    fallback, not bwrap, ran every one of these notebooks)."""
    bounds = set()
    for student in fallback_run.students:
        path = fallback_run.course / "grading-records" / student / "stability.json"
        record = json.loads(path.read_text(encoding="utf-8"))["history"][-1]
        bounds |= {item.get("evidence", {}).get("sandbox_memory", "") for item in record["items"]}
    assert bounds and all("the fallback sandbox" in bound for bound in bounds), bounds
