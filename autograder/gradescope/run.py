"""``run_autograder``: grade ``/autograder/submission``'s notebook the trusted way and write ``results.json``.

Gradescope runs this as root for each submission (the bundle's ``run_autograder`` calls
``python -I -m autograder.gradescope.run``). In order: lock the grader's files away from the worker's user
(``/autograder/source`` and the submission 0700, the results directory root's); choose the assignment (a bundle of
several: the one the Gradescope title names, else the notebook uploaded); find the notebook named for the
assignment (missing, several or unreadable: every item 0, saying why); take its cells as nbgrader would
(``jobs.job_cells`` with the instructor's cells from the bundle's ``source_map.json``); draw the hidden seed; grade
through ``jobs.grade_job_here`` (the student's code in a worker, every check here, the same path as ``grade``), in
bubblewrap's sandbox where it starts and in the fallback sandbox where it does not; then end every process of the
worker's user and remove its files, and only then write ``results.json`` (root, atomically). A failure of the grader
itself is written as a grader error, never as the student's 0 for their work.
"""

import argparse
import json
import os
import re
import sys
import time
import traceback
from pathlib import Path

from autograder import settings as settings_module
from autograder.engine import notebooks
from autograder.engine.jobs import GraderMemoryError, grade_job_here, job_cells
from autograder.engine.trusted_runner import MachineError, use_fallback
from autograder.gradescope import fallback
from autograder.gradescope.results import late_from_metadata, results_json, zero_results
from autograder.sandbox import bubblewrap as sandbox
from autograder.spec import new_run_seed

CONFIG = "gradescope.json"       # in the bundle: {"assignments", "gpu_items", "feedback", "settings", ...}
SOURCE_MAP = "source_map.json"   # in the bundle: {assignment: jobs.source_map (its graded cells)}


def assignments_of(config):
    """The assignments a bundle grades (``gradescope.json``'s ``assignments``)."""
    return list(config.get("assignments") or ([config["assignment"]] if config.get("assignment") else []))


class Layout:
    """Gradescope's directories under ``root`` (``/autograder``)."""

    def __init__(self, root):
        self.root = Path(root)
        self.source = self.root / "source"
        self.submission = self.root / "submission"
        self.results = self.root / "results"
        self.metadata = self.root / "submission_metadata.json"
        self.venv = self.root / "venv"


def lock_down(layout):
    """The worker's user reads none of the grader's files: the bundle (wheels with the oracles, the spec), the
    submission and ``run_autograder`` are root's alone, the results directory is root's and not writable by others.
    (setup.sh made the installed grader package 0700.)"""
    for path in (layout.source, layout.submission, layout.root / "run_autograder", layout.metadata):
        if path.exists():
            os.chown(path, 0, 0)
            os.chmod(path, 0o700 if path.is_dir() or path.name == "run_autograder" else 0o600)
    layout.results.mkdir(parents=True, exist_ok=True)
    os.chown(layout.results, 0, 0)
    os.chmod(layout.results, 0o755)


def read_json(path, default):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default


def find_notebook(layout, assignment):
    """``(path, None)`` of the notebook to grade, or ``(None, why)``: ``<assignment>.ipynb`` anywhere in the
    submission, else the only ``.ipynb`` there. A symbolic link is never taken: root reads the notebook, and a link
    could point at the grader's files."""
    found = sorted(p for p in layout.submission.rglob("*.ipynb")
                   if p.is_file() and not p.is_symlink() and ".ipynb_checkpoints" not in p.parts)
    named = [p for p in found if p.name == f"{assignment}.ipynb"]
    if len(named) == 1:
        return named[0], None
    if not named and len(found) == 1:
        return found[0], None
    names = ", ".join(str(p.relative_to(layout.submission)) for p in found) or "none"
    if named:
        return None, (f"Your submission holds {len(named)} notebooks named {assignment}.ipynb ({names}): upload "
                      "exactly one. Nothing was graded.")
    return None, (f"No notebook named {assignment}.ipynb was found in your submission (notebooks found: {names}). "
                  f"Upload your {assignment}.ipynb. Nothing was graded.")


def read_cells(path, assignment, source_map):
    """The cells to grade, or ``(None, why)`` for a notebook that is too large or not a notebook."""
    limit = settings_module.settings.grading.max_notebook_mb
    size_mb = path.stat().st_size / 2**20
    if size_mb > limit:
        return None, (f"{path.name} is {size_mb:.0f} MB, over the limit of {limit:g} MB: it was not read or graded. "
                      "Clear the outputs (Edit > Clear Outputs of All Cells), save and upload it again.")
    try:
        nb = notebooks.loads(path.read_bytes())
    except notebooks.NotebookError as error:
        return None, (f"{path.name} could not be read: {error}. Nothing was graded; upload the notebook as JupyterLab "
                      "saves it.")
    return job_cells(nb, assignment, source_map), None


def choose_sandbox():
    """bwrap's sandbox where it starts; else the fallback, registered for ``launcher_for``. Returns its description."""
    try:
        return f"the bubblewrap sandbox ({sandbox.probe()})"
    except sandbox.SandboxUnavailable as error:
        fallback.account()
        use_fallback(fallback.launcher)
        return fallback.describe(str(error).split(". ")[0])


def choose_assignment(layout, assignments):
    """``(assignment, None)`` that this submission is for, or ``(None, why)``. A bundle of one assignment grades
    that one; a bundle of several takes the one the Gradescope assignment's title names (``"Lab 7: stability"``),
    else the one whose notebook was uploaded."""
    if len(assignments) == 1:
        return assignments[0], None
    title = str((read_json(layout.metadata, {}).get("assignment") or {}).get("title") or "")
    named = [name for name in assignments if re.search(rf"(?<![A-Za-z]){name}(?![A-Za-z])", title, re.IGNORECASE)]
    if len(named) == 1:
        return named[0], None
    uploaded = {p.stem for p in layout.submission.rglob("*.ipynb") if p.is_file() and not p.is_symlink()
                and ".ipynb_checkpoints" not in p.parts} & set(assignments)
    if len(uploaded) == 1:
        return uploaded.pop(), None
    return None, (f"This autograder grades {', '.join(assignments)}, and neither the assignment's title nor the "
                  f"notebook uploaded says which: upload exactly one of {', '.join(f'{a}.ipynb' for a in assignments)}"
                  ". Nothing was graded.")


def grade(layout, config):
    """``results.json`` as a dict for the submission in ``layout``."""
    feedback, gpu_policy = config["feedback"], config["gpu_items"]
    options = {"feedback": feedback, "gpu_policy": gpu_policy}
    assignment, why = choose_assignment(layout, assignments_of(config))
    if assignment is None:
        return {"score": 0.0, "output": why, "tests": []}
    path, why = find_notebook(layout, assignment)
    if path is None:
        return zero_results(assignment, why, **options)
    cells, why = read_cells(path, assignment, read_json(layout.source / SOURCE_MAP, {}).get(assignment, {}))
    if cells is None:
        return zero_results(assignment, why, **options)
    where = choose_sandbox()
    seed = new_run_seed()
    try:
        data = grade_job_here(assignment, cells, seed=seed, sandbox=True, last=True)   # one notebook per process
    except (GraderMemoryError, MachineError) as error:   # the grader's or the machine's failure, not the student's
        return zero_results(assignment, f"Grader error: {error}", grader_error=True, **options)
    late = late_from_metadata(read_json(layout.metadata, {}))
    return results_json(data, assignment, late=late, sandbox=where, seed=seed, **options)


def clean_up_worker_user():
    """Nothing of the worker's user outlives grading: its processes killed, its files in /tmp and alike removed."""
    killed = removed = 0
    for user in (fallback.USER, fallback.BASELINE_USER):
        try:
            uid, _ = fallback.account(user)
        except sandbox.SandboxUnavailable:
            continue
        killed += fallback.end_user_processes(uid)
        removed += fallback.remove_user_files(uid)
    return {"killed": killed, "removed": removed}


def write_results(layout, result):
    """Root writes ``results.json`` atomically into its own directory, after the worker is gone."""
    target = layout.results / "results.json"
    partial = layout.results / ".results.json.partial"
    partial.write_text(json.dumps(result, indent=1), encoding="utf-8")
    os.chmod(partial, 0o644)
    os.replace(partial, target)
    return target


def run(root):
    started = time.perf_counter()
    layout = Layout(root)
    config = read_json(layout.source / CONFIG, None) or {}
    names = assignments_of(config)
    assignment = names[0] if len(names) == 1 else ""
    try:
        lock_down(layout)
        with settings_module.override(config.get("settings", {})), \
                settings_module.override({"grading": {"gpu_items": "fail"}}):   # waived ones are taken out after
            result = grade(layout, config)
    except Exception:   # noqa: BLE001 - the grader's own failure: said as such, never the student's 0
        detail = traceback.format_exc()
        print(detail, file=sys.stderr)
        message = ("Grader error: the autograder itself failed (not a problem in your work); your instructor will "
                   f"regrade. {detail.strip().splitlines()[-1]}")
        result = zero_results(assignment, message, feedback=config.get("feedback", "immediate"),
                              gpu_policy=config.get("gpu_items", "fail"), grader_error=True) if assignment else \
            {"score": 0.0, "output": message, "tests": [], "extra_data": {"grader_error": detail}}
    finally:
        cleaned = clean_up_worker_user()
    result.setdefault("extra_data", {}).update(cleanup=cleaned, run_seconds=round(time.perf_counter() - started, 1))
    return write_results(layout, result)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="run_autograder", description=__doc__.splitlines()[0])
    parser.add_argument("--root", default="/autograder", help="Gradescope's directory (default: /autograder)")
    args = parser.parse_args(argv)
    print(f"results written to {run(args.root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
