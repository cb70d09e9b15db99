"""One submission graded as a unit of work that can run anywhere: the notebook's bytes in, plain data out.

``grade_job(job)`` is what a grading process runs, this one or a Dask worker on another machine: it reads the
notebook from the job's bytes, gives every cell the instructor's nbgrader metadata (and every locked cell the
instructor's source) from the job's ``source`` map, exactly as nbgrader's sanitizing steps do before our
``TrustedExecute``, and grades the code cells the trusted way (``trusted_runner.grade_cells``: the student's code in
a sandboxed worker, every check here). It needs no course directory, no gradebook and no nbgrader: torch, numpy,
OpenCV and this package (and Dask, to be a Dask worker). What it returns is plain data (:func:`grade_to_data`); the
grader writes it into nbgrader's gradebook on the instructor's side (``TrustedExecute`` replays it there, after
checking that nbgrader sees the very cells that were graded: :func:`cells_digest`).
"""

import contextlib
import copy
import functools
import hashlib
import json
import os
import resource
import socket
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from autograder import settings as settings_module
from autograder.checks import items_of
from autograder.engine import notebooks
from autograder.engine.trusted_runner import CellOutcome, NotebookGrade, grade_cells, launcher_for
from autograder.engine.verdict import Verdict
from autograder.spec import grading_run

CUDA = "cuda"


@dataclass
class Job:
    student: str
    assignment: str
    notebook: bytes                 # the submitted .ipynb, as handed in
    source: dict                    # source_map(course, assignment): the instructor's metadata of every graded cell
    seed: int                       # the hidden variants' seed of the grading run
    sandbox: bool = True            # False: --no-sandbox
    only: list | None = None        # grade only these item ids (the GPU items of a submission graded before)
    settings: dict = field(default_factory=dict)   # the grader's settings (settings.as_dict()), applied for the job
    grader: str = ""                # the grader's checks_digest(assignment): a worker with other checks refuses
    last: bool = False              # the grading process gets no other job (a local cluster's worker, at the end)

    @property
    def key(self):
        return f"{self.student}/{self.assignment}"


def source_map(course, assignment, notebook=None):
    """``{grade id: {"cell_type", "nbgrader", "source" (locked cells only)}}`` from ``source/<a>/<a>.ipynb``: what
    nbgrader's gradebook holds of the instructor's cells, as plain data a worker anywhere can use."""
    path = Path(course) / "source" / assignment / f"{notebook or assignment}.ipynb"
    try:
        cells = notebooks.read(path)["cells"]
    except notebooks.NotebookError as error:
        raise RuntimeError(f"cannot read the source notebook {path}: {error}") from None
    found = {}
    for cell in cells:
        cell_id = notebooks.grade_id(cell)
        if cell_id:
            meta = notebooks.nbgrader_meta(cell)
            found[cell_id] = {"cell_type": cell.get("cell_type"), "nbgrader": copy.deepcopy(meta),
                              "source": notebooks.source_text(cell) if meta.get("locked") else None}
    return found


def restore_metadata(nb, source):
    """Every cell's nbgrader metadata made the instructor's, by grade id (``TrustedMetadata``'s rule); returns the
    grade ids that were not the instructor's (dropped). A cell whose id the source lacks, whose type differs, or
    whose id was already seen, loses its nbgrader metadata and is plain code."""
    seen, dropped = set(), []
    for cell in nb["cells"]:
        meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        if "nbgrader" not in meta:
            continue
        cell_id = notebooks.grade_id(cell) if isinstance(meta.get("nbgrader"), dict) else None
        mine = source.get(cell_id) if isinstance(cell_id, str) else None
        if mine and cell_id not in seen and cell.get("cell_type") == mine["cell_type"]:
            meta["nbgrader"] = copy.deepcopy(mine["nbgrader"])
            seen.add(cell_id)
        else:
            del meta["nbgrader"]
            dropped.append(cell_id)
    return dropped


def restore_test_cells(nb, source, assignment):
    """Put back every graded test cell of ``assignment`` that ``nb`` (its metadata restored) lacks, from the
    instructor's ``source`` map, after the nearest cell that comes before it in the source (nbgrader's
    ``add_missing_cells``, which needs that cell to be a graded or solution one); returns the ids put back. The item
    is graded from the spec either way; this gives nbgrader a cell to score."""
    order = list(source)
    present = {notebooks.grade_id(c) for c in nb["cells"]}
    added = []
    for item in items_of(assignment):
        mine = source.get(item.cell_id)
        if item.cell_id in present or not mine or mine["cell_type"] != "code":
            continue
        cell = {"cell_type": "code", "execution_count": None, "outputs": [], "id": f"restored-{item.cell_id}",
                "metadata": {"nbgrader": copy.deepcopy(mine["nbgrader"]), "editable": False, "deletable": False},
                "source": mine["source"] or ""}
        before = set(order[:order.index(item.cell_id)])
        at = max((i + 1 for i, c in enumerate(nb["cells"]) if notebooks.grade_id(c) in before),
                 default=len(nb["cells"]))
        nb["cells"].insert(at, cell)
        present.add(item.cell_id)
        added.append(item.cell_id)
    return added


def overwrite_locked(nb, source):
    """Every locked cell's source made the instructor's (nbgrader's ``OverwriteCells``), after
    :func:`restore_metadata`."""
    for cell in nb["cells"]:
        mine = source.get(notebooks.grade_id(cell)) if notebooks.grade_id(cell) else None
        if mine and mine["source"] is not None:
            cell["source"] = mine["source"]


def job_cells(nb, assignment, source):
    """The ``[(cell key, source)]`` that nbgrader's autograde hands ``TrustedExecute`` for this notebook."""
    restore_metadata(nb, source)
    restore_test_cells(nb, source, assignment)
    overwrite_locked(nb, source)
    return notebooks.code_cells(nb, assignment)


def cells_digest(cells):
    """A digest of the cells that were run: the grader replays a result only on the same cells."""
    return hashlib.sha256(json.dumps(cells, ensure_ascii=False).encode()).hexdigest()


def checks_digest(assignment):
    """A digest of the assignment's graded items and of this package's code (the checks and everything they use):
    two grading processes with the same digest grade alike."""
    items = [[i.id, i.points, i.visible, list(i.hidden), i.needs, i.name] for i in items_of(assignment)]
    return hashlib.sha256(json.dumps(items, sort_keys=True, default=repr).encode() + _package_digest()).hexdigest()


@functools.cache
def _package_digest():
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.digest()


def grader_digest(assignment):
    """What a recorded grade depends on besides the notebook: the checks and the settings in force (but the
    gradebook's address, and the deadlines: a kept grade's lateness is settled again, lateness.settle). A regrade is due
    when it changes."""
    values = settings_module.as_dict()
    values.get("grading", {}).pop("db_url", None)
    values.pop("deadlines", None)
    payload = checks_digest(assignment) + json.dumps(values, sort_keys=True, default=repr)
    return hashlib.sha256(payload.encode()).hexdigest()


def submission_digest(data, grader):
    """The content hash kept in a submission's record: its bytes and the grader (:func:`grader_digest` of its
    assignment) they were graded with."""
    return hashlib.sha256(data + b"\0" + grader.encode()).hexdigest()


# ------------------------------------------------------------------ the worker's side

_ONE_AT_A_TIME = threading.Lock()   # a Dask worker with several threads still grades one job at a time here


def grade_job(job):
    """Grade ``job`` here; returns :func:`grade_to_data` of its ``NotebookGrade`` with where and how long."""
    with _ONE_AT_A_TIME:
        if job.grader and job.grader != checks_digest(job.assignment):
            raise RuntimeError(f"this worker ({socket.gethostname()}) has other checks for {job.assignment} than "
                               "the grader: install the same autograder version on every worker")
        nb = notebooks.loads(job.notebook)
        cells = job_cells(nb, job.assignment, job.source)
        with settings_module.override(job.settings):
            return grade_job_here(job.assignment, cells, seed=job.seed, sandbox=job.sandbox, only=job.only,
                                  last=job.last)


def grade_job_here(assignment, cells, *, seed, sandbox=True, only=None, last=False):
    """Grade ``cells`` (``[(cell key, source)]``) the trusted way in this process, as an official grade; returns
    :func:`grade_to_data` with the seed, whether sandboxed, where, how long (the wall time of the whole notebook) and
    the grader's memory bound. Raises :class:`GraderMemoryError` when grading it needed more than that bound.
    ``last``: this process grades nothing after it (``trusted_runner.grade_cells``: no worker started ahead)."""
    started = time.perf_counter()
    confined = bool(sandbox and settings_module.settings.grading.sandbox)
    with grader_memory_bound() as bound, grading_run(official=True, seed=seed):
        try:
            grade = grade_cells(assignment, cells, seed=seed, launcher=launcher_for(confined), only=only, ahead=True,
                                last=last)
        except MemoryError:
            raise GraderMemoryError(f"grading this submission needed more memory than the grader's limit ({bound}); "
                                    "not the student's failure: grade it again with a larger "
                                    "settings.grading.grader_memory_gb") from None
    data = grade_to_data(grade, cells)
    data.update(seed=seed, sandboxed=confined, worker=worker_name(), cuda=cuda_here(),
                seconds=time.perf_counter() - started, peak_rss_mb=peak_rss_mb(), grader_memory=bound)
    return data


class GraderMemoryError(RuntimeError):
    """Grading one submission needed more than the grading process's memory bound (the grader's, not the student's
    failure: the batch records it as that submission's error and goes on)."""


@contextlib.contextmanager
def grader_memory_bound():
    """The grading process's address space bounded for one job (RLIMIT_AS, the soft limit: put back after, so that a
    Dask worker or ``grade``'s process grades the next job as before); yields what bounds it, for the record.

    ``settings.grading.grader_memory_gb`` (0: none). Not set where CUDA is available (it reserves far more address
    space than it uses) nor below what the process already has mapped plus 1 GiB (it would fail at once)."""
    gigabytes = settings_module.settings.grading.grader_memory_gb
    if not gigabytes:
        yield "none (settings.grading.grader_memory_gb is 0)"
        return
    if cuda_here():
        yield "none: CUDA is available to the grading process (bound the machine's memory: Dask's memory_limit, a cgroup)"
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = max(int(gigabytes * 2**30), _mapped_bytes() + 2**30)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if soft != resource.RLIM_INFINITY and soft <= limit:
        yield f"RLIMIT_AS {soft / 2**30:.1f} GiB on the grading process (set before)"
        return
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield f"RLIMIT_AS {limit / 2**30:.1f} GiB on the grading process"
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _mapped_bytes():
    """This process's address space now (VmSize)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


DELETED, EDITED = "deleted", "edited"
_TEST_CELL_NOTES = {DELETED: "its test cell {cell} was deleted from the submission: graded from the spec",
                    EDITED: "its test cell {cell} was edited: graded from the spec (the edit is ignored)"}


def test_cell_changes(nb, source, assignment):
    """``{item id: (DELETED or EDITED, its test cell's id)}`` for each graded item whose test cell the submission
    deleted or edited (``nb`` with the instructor's metadata restored)."""
    present = {}
    for cell in nb["cells"]:
        cell_id = notebooks.grade_id(cell)
        if cell_id and cell.get("cell_type") == "code":
            present.setdefault(cell_id, notebooks.source_text(cell))
    found = {}
    for item in items_of(assignment):
        mine = (source.get(item.cell_id) or {}).get("source")
        if item.cell_id not in present:
            found[item.id] = DELETED, item.cell_id
        elif mine is not None and present[item.cell_id].strip() != without_hidden_tests(mine).strip():
            found[item.id] = EDITED, item.cell_id
    return found


def test_cell_notes(changes):
    """``{item id: note}`` for :func:`test_cell_changes`: the item is graded from the spec all the same, and the
    record says so."""
    return {item: _TEST_CELL_NOTES[change].format(cell=cell) for item, (change, cell) in changes.items()}


def without_hidden_tests(text):
    """A test cell's source as released: the lines between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``
    (the markers too) left out."""
    kept, hidden = [], False
    for line in text.splitlines():
        if line.strip() == "### BEGIN HIDDEN TESTS":
            hidden = True
        elif line.strip() == "### END HIDDEN TESTS":
            hidden = False
        elif not hidden:
            kept.append(line)
    return "\n".join(kept)


def submitted_facts(course, student, assignment, notebook=None):
    """What the record says of the submitted file itself: its content hash (:func:`submission_digest`), the notes
    on its deleted or edited test cells, and the nbgrader metadata it carried that was not the instructor's."""
    path = Path(course) / "submitted" / student / assignment / f"{notebook or assignment}.ipynb"
    try:
        data = path.read_bytes()
        nb = notebooks.loads(data)
    except (OSError, notebooks.NotebookError):
        return {"digest": "", "notes": {}, "problems": []}
    source = source_map(course, assignment, notebook)
    dropped = restore_metadata(nb, source)
    changed = test_cell_changes(nb, source, assignment)
    notes = test_cell_notes(changed)
    deleted = [cell for change, cell in changed.values() if change == DELETED]
    return {"digest": submission_digest(data, grader_digest(assignment)), "notes": notes,
            "problems": [f"a cell's nbgrader metadata (grade id {cell_id!r}) is not the instructor's: ignored"
                         for cell_id in dropped] + ([deleted_cells_problem(path.name, deleted)] if deleted else [])}


def deleted_cells_problem(filename, cell_ids):
    """The problem a submission whose test cells were deleted records (its items are graded all the same)."""
    return f"{filename}: test cells deleted (graded from the spec all the same): {', '.join(cell_ids)}"


def with_notes(items, notes):
    """The items (dicts) with each one's note added."""
    return [dict(i, note="; ".join(n for n in (i.get("note", ""), notes.get(i["item"], "")) if n)) for i in items]


def grade_to_data(grade, cells):
    return {"items": [r.to_dict() for r in grade.items], "cells": [asdict(c) for c in grade.cells],
            "problems": list(grade.problems), "cells_digest": cells_digest(cells)}


def grade_from_data(data):
    """The ``NotebookGrade`` back from :func:`grade_to_data` (``TrustedExecute`` writes it into the notebook)."""
    return NotebookGrade([Verdict.from_dict(r) for r in data.get("items", [])],
                         [CellOutcome(**c) for c in data.get("cells", [])], list(data.get("problems", [])))


def merge(earlier, later):
    """``earlier``'s result with the items that ``later`` graded (a GPU worker's, for the pending items) replacing
    its own, in ``earlier``'s order; the problems of both."""
    graded = {r["item"]: r for r in later.get("items", [])}
    merged = dict(earlier)
    merged["items"] = [graded.get(r["item"], r) for r in earlier.get("items", [])]
    merged["problems"] = list(earlier.get("problems", [])) + [
        p for p in later.get("problems", []) if p not in earlier.get("problems", [])]
    merged["seconds"] = earlier.get("seconds", 0.0) + later.get("seconds", 0.0)
    merged["gpu_worker"] = later.get("worker")
    merged["peak_rss_mb"] = max(earlier.get("peak_rss_mb", 0.0), later.get("peak_rss_mb", 0.0))
    return merged


def pending_items(data):
    return [r["item"] for r in data.get("items", []) if r.get("status") == "pending"]


def worker_name():
    """This grading process, for the record (on Dask, ``batch.dask_grade_job`` puts the worker's address instead)."""
    return f"{socket.gethostname()} (pid {os.getpid()})"


def cuda_here():
    import torch

    return torch.cuda.is_available()


def gpu_count():
    """The GPUs this process sees (0 without CUDA)."""
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def peak_rss_mb():
    """The largest resident memory of this process and of any one process it started (the sandboxed workers),
    in MB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return round(max(own, children), 1)
