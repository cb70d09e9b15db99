"""What the loading checks run where the student's code runs: files, DataLoader passes, open files, memory, copies.

Under trusted grading the student's classes and functions live in a worker process (:mod:`autograder.sandbox`)
that sees only its own scratch directory; a DataLoader over the student's dataset, its worker processes, the files
a pass leaves open, the memory it traces and the arrays a ``collate_fn`` shares with its input exist only there.
The probes below (``make_directory``, ``write_files``, ``write_tars``, ``shard_layout``, ``load``,
``collated_batches``, ``missing_shard_attempt``, ``open_files``, ``traced_peak``, ``collate_copies``) are run with
:func:`~autograder.seam.remote.beside`: in that worker when one of their arguments is a student's (remote)
object, else right here, so that grading in one process is unchanged. They take and return plain data (paths,
names, bytes, arrays and tensors, numbers); a probe's ``student`` argument only says where to run. The helpers the
checks call (``scratch``, ``write_samples``, ``write_shard_set``, ``load_beside``, ``load_collated``,
``files_after_pass``, ``peak_of_pass``) run here and call them.

The grader's data crosses as bytes (:mod:`.synthetic` makes them here) and the worker writes them into its own
temporary directory, so no path of the grader's is ever used there. A failure the worker finds itself (a pass that
raised or hung) comes back as ``{"failure": ...}``, and :func:`relay` raises it here as the same CheckFailure.

What a worker reports is reported by the student's process, which can rewrite this module there: the items a pass
yielded (and so which readers read them, and whether real worker processes ran), the files left open, the peak
memory, whether the batch shares memory with its input and whether it was pinned are facts a hostile student can
forge (docs/security.md). What they are judged against (the names, ids and pixels of the grader's own samples, the
oracle's collation, the shard members' bytes) is computed here.
"""

import contextlib
import os
import shutil
import tempfile

import numpy as np
import torch

from autograder.checks.dataloading import synthetic
from autograder.checks.dataloading.batches import SyntheticImageDataset, arrays_in, as_array
from autograder.checks.dataloading.resources import no_torch_modes, pass_and_files, peak_traced_bytes
from autograder.checks.dataloading.runs import load_all, start_method
from autograder.errors import CheckFailure, WorkerLost
from autograder.seam.handle import handle
from autograder.seam.probes import probe
from autograder.settings import settings

ANSWER_MARGIN_S = 30.0   # the grader waits this much longer for a pass than the pass's own limits in the worker


# ------------------------------------------------------------------ failures found in the worker

def _failed(failure):
    return {"failure": (failure.detail, failure.hint, failure.measurements, failure.kind)}


def relay(check, answer):
    """``answer`` from a probe; a failure the probe reported is raised here, as the check's own."""
    __tracebackhide__ = True
    if type(answer) is dict and "failure" in answer:
        detail, hint, measurements, *kind = answer["failure"]
        raise CheckFailure(check, str(detail), hint=hint, measurements=measurements,
                           kind=str(kind[0]) if kind else None)
    return answer


# ------------------------------------------------------------------ files

@contextlib.contextmanager
def scratch(student, prefix):
    """A temporary directory beside ``student`` (the worker's own temporary directory), removed afterwards."""
    root = handle(student).beside(make_directory, prefix)
    try:
        yield root
    finally:
        with contextlib.suppress(WorkerLost):   # a lost worker's scratch goes with it
            handle(student).beside(remove_directory, root)


@probe
def make_directory(student, prefix):
    return tempfile.mkdtemp(prefix=prefix)


@probe
def remove_directory(student, path):
    shutil.rmtree(path, ignore_errors=True)


def write_samples(student, directory, files):
    """``files`` (samples, or ``(name, bytes)``) written into ``directory`` beside ``student``; their sorted paths."""
    return handle(student).beside(write_files, directory,
                  [(f.name, f.data) if isinstance(f, synthetic.Sample) else f for f in files])


@probe
def write_files(student, directory, files):
    """``files`` (``[(name, bytes)]``) written into ``directory`` in that order; returns their paths, sorted."""
    os.makedirs(directory, exist_ok=True)
    for name, data in files:
        with open(os.path.join(directory, name), "wb") as handle:
            handle.write(data)
    return sorted(os.path.join(directory, name) for name, _ in files)


@probe
def write_tars(student, shards):
    """``shards`` (``[(path, [(member name, bytes or None)])]``) written by the grader's writer; returns the paths."""
    for path, members in shards:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        synthetic.write_tar(path, members)
    return [path for path, _ in shards]


def write_shard_set(student, out_dir, groups):
    """The grader's shards of ``groups`` of samples (:func:`synthetic.shard_plan`) written beside ``student``;
    returns their paths."""
    return handle(student).beside(write_tars, synthetic.shard_plan(out_dir, groups))


@probe
def shard_layout(student, returned, out_dir, num_shards):
    """What ``write_shards`` wrote: ``{"returned": whether it returned the shard paths in order, "written": the
    names in ``out_dir``, "shards": [[(member, bytes)] per shard (files only), or the error reading it]}``."""
    expected = [os.path.join(out_dir, f"shard-{i:05d}.tar") for i in range(num_shards)]
    try:
        returned_paths = [os.path.realpath(os.fspath(p)) for p in returned]
    except TypeError:
        returned_paths = None
    facts = {"returned": returned_paths == [os.path.realpath(p) for p in expected],
             "written": sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else [], "shards": []}
    if not facts["returned"] or facts["written"] != [os.path.basename(p) for p in expected]:
        return facts
    for path in expected:
        try:
            members = synthetic.read_tar_members(path)
        except Exception as error:  # noqa: BLE001 - any unreadable shard is the student's
            facts["shards"].append(str(error))
            break
        facts["shards"].append([(name, data) for name, data in members if data is not None])
    return facts


# ------------------------------------------------------------------ DataLoader passes

def load_beside(check, dataset, num_workers, *, where, timeout=None, **options):
    """:func:`runs.load_all` run where ``dataset`` lives, with this process's start method and time limit (the
    grader waits :data:`ANSWER_MARGIN_S` longer); the items (or batches) come back as data."""
    __tracebackhide__ = True
    timeout = settings.dataloader_timeout_s if timeout is None else timeout
    seconds = (timeout + 5 if num_workers else timeout) + ANSWER_MARGIN_S
    return relay(check, handle(dataset).beside_within(seconds, load, check, num_workers, where, timeout,
                                                    start_method(), options))["items"]


@probe
def load(dataset, check, num_workers, where, timeout, method, options):
    try:
        with no_torch_modes():            # as in the grader's own process: nothing counts ops in a pass
            return {"items": load_all(check, dataset, num_workers, where=where, timeout=timeout, method=method,
                                      **options)}
    except CheckFailure as failure:
        return _failed(failure)


def load_collated(check, collate_images, samples, tensors, num_workers, *, where, **options):
    """The batches of a DataLoader over the grader's :class:`SyntheticImageDataset` of ``samples`` with
    ``collate_fn=collate_images``, built where ``collate_images`` lives; ``(batches, pinned)``: ``pinned`` is
    ``[(images pinned, sizes pinned)]`` per batch where CUDA is available, else None."""
    __tracebackhide__ = True
    timeout = settings.dataloader_timeout_s
    seconds = timeout + 5 + ANSWER_MARGIN_S
    plain = [(s.name, s.sample_id, s.fmt, s.data) for s in samples]
    answer = relay(check, handle(collate_images).beside_within(seconds, collated_batches, check, plain, tensors,
                                                          num_workers, where, timeout, start_method(), options))
    return answer["batches"], answer["pinned"]


@probe
def collated_batches(collate_images, check, samples, tensors, num_workers, where, timeout, method, options):
    dataset = SyntheticImageDataset([synthetic.Sample(*s) for s in samples], tensors=tensors)
    try:
        with no_torch_modes():
            batches = load_all(check, dataset, num_workers, where=where, timeout=timeout, method=method,
                               collate_fn=collate_images, **options)
    except CheckFailure as failure:
        return _failed(failure)
    pinned = None
    if torch.cuda.is_available():
        pinned = [[_pinned(part) for part in batch[1:3]] if isinstance(batch, (tuple, list)) and len(batch) == 3
                  else [False, False] for batch in batches]
    return {"batches": batches, "pinned": pinned}


def _pinned(value):
    return isinstance(value, torch.Tensor) and bool(value.is_pinned())


@probe
def missing_shard_attempt(TarImageDataset, paths):
    """Samples yielded before ``FileNotFoundError`` (building the dataset on ``paths``, then a full pass), or None
    when none was raised; any other error propagates."""
    yielded = 0
    try:
        dataset = TarImageDataset(list(paths))
        for _ in dataset:
            yielded += 1
    except FileNotFoundError:
        return yielded
    return None


# ------------------------------------------------------------------ resources

def files_after_pass(check, dataset, directory, what):
    """``(items, still open, unclosed)`` of :func:`resources.pass_and_files`, run where ``dataset`` lives."""
    __tracebackhide__ = True
    timeout = settings.call_timeout_s
    answer = relay(check, handle(dataset).beside_within(timeout + ANSWER_MARGIN_S, open_files, check, directory,
                                                      what, timeout))
    return answer["count"], answer["still_open"], answer["unclosed"]


@probe
def open_files(dataset, check, directory, what, timeout):
    try:
        count, still_open, unclosed = pass_and_files(check, dataset, directory, what=what, timeout=timeout)
    except CheckFailure as failure:
        return _failed(failure)
    return {"count": count, "still_open": still_open, "unclosed": unclosed}


def peak_of_pass(check, dataset, what, *, warm_up=False):
    """``(items, peak bytes)`` of :func:`resources.peak_traced_bytes`, run where ``dataset`` lives."""
    __tracebackhide__ = True
    timeout = settings.call_timeout_s
    answer = relay(check, handle(dataset).beside_within(2 * timeout + ANSWER_MARGIN_S, traced_peak, check, what,
                                                      timeout, warm_up))
    return answer["count"], answer["peak"]


@probe
def traced_peak(dataset, check, what, timeout, warm_up):
    try:
        count, peak = peak_traced_bytes(check, dataset, what=what, timeout=timeout, warm_up=warm_up)
    except CheckFailure as failure:
        return _failed(failure)
    return {"count": count, "peak": peak}


# ------------------------------------------------------------------ memory a batch shares with its input

@probe
def collate_copies(collate_images, items):
    """``collate_images(items)`` where it lives, then every tensor and array of its result written to: ``{"result":
    a copy of the result as returned, "changed": the first input image the call changed, "written": the first one
    that writing into the result changed}`` (indices, or None). Errors of the call propagate."""
    before = [as_array(image).copy() for _, image in items]
    result = collate_images(items)
    facts = {"result": _copied(result), "changed": _first_changed(items, before), "written": None}
    for value in arrays_in(result):
        try:
            if isinstance(value, torch.Tensor):
                with torch.no_grad():
                    value.add_(1)                  # every element changes (uint8 wraps around)
            elif value.flags.writeable:
                value += 1
        except (RuntimeError, TypeError, ValueError):   # an overlapping or read-only view cannot be written
            continue
    facts["written"] = _first_changed(items, before)
    return facts


def _first_changed(items, before):
    return next((index for index, ((_, image), copy) in enumerate(zip(items, before))
                 if not _same_array(image, copy)), None)


def _same_array(image, copy):
    return bool(np.array_equal(as_array(image), copy))


def _copied(value, depth=0):
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, np.ndarray):
        return value.copy()
    if depth < 2 and type(value) in (list, tuple):
        return type(value)(_copied(v, depth + 1) for v in value)
    return value
