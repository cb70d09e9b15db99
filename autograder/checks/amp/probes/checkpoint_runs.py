"""The student's side of the checkpoint checks: each run happens where ``save_checkpoint`` / ``load_checkpoint`` live.

With trusted grading the student's functions are proxies for functions in their worker, and
the model, optimizer and scaler they save and load into must be there too, with the file. So
each check runs one of these functions beside them (``autograder.seam.remote.beside``; in one
process it simply runs here): it builds the run from the check's seed with the grader's own
loop (``checkpoint.py``), calls the student's functions, and returns plain data: the step
``load_checkpoint`` returned, the state dicts after loading (as plain dicts), the losses of the
resumed run, the bytes of the file. A call that fails comes back as ``{"failure": [detail,
hint]}`` and the run stops there. The check computes its expectations itself, from the same
seeds, and judges. A save and the load that follows are two runs: the save's sends the file's bytes back, and the
load's writes them to a path of its own, under trusted grading in a fresh worker that never ran the save
(``resuming.py``).

Reported by the student's process, so forgeable by a hostile student: whether the file was
written and its bytes, the returned step, the states after loading, the resumed losses, and
whether loading ran the pickled probe (:func:`refusal_run`). The file's bytes are judged by the
grader itself, with ``torch.load(..., weights_only=True)``.
"""

import os
import tempfile
from pathlib import Path

import torch

from autograder.checks.amp import checkpoint, problems
from autograder.errors import CheckFailure
from autograder.seam.probes import probe
from autograder.seam.student import call_student

MAX_FILE_BYTES = 64 << 20      # a checkpoint of the checks' small models is a few kB


def _student(check, fn, *args, what):
    """``(result, None)``, or ``(None, [detail, hint])`` when the call fails."""
    try:
        return call_student(check, fn, *args, what=what), None
    except CheckFailure as failure:
        return None, [failure.detail, failure.hint, failure.kind]


def plain(value):
    """A state dict as plain data: ordered dicts as dicts, tensors detached copies, other values as they are."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if type(value) in (list, tuple):
        return type(value)(plain(v) for v in value)
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    return value


def state(model, optimizer, scaler):
    """What a checkpoint must restore, as plain data: the three state dicts."""
    return plain(checkpoint.snapshot(model, optimizer, scaler))


def _save(check, save_checkpoint, model, optimizer, scaler, step, as_path=False):
    """``save_checkpoint(path, model, optimizer, scaler, step)`` to a path in a directory of its own, and what came
    of it: ``{"failure": the save's, "file": {"path", "written"}, "content": the file's bytes}`` (what the grader
    carries to the process that loads it; only when the save did not fail and wrote a file, and the file's size
    instead of its bytes when it is too big)."""
    with tempfile.TemporaryDirectory() as directory:
        path = checkpoint.temporary_path(directory, as_path)
        _, failure = _student(check, save_checkpoint, path, model, optimizer, scaler, step, what="save_checkpoint")
        written = os.path.isfile(path) and os.path.getsize(path) > 0
        report = {"failure": failure, "file": {"path": str(path), "written": written}}
        if written and not failure:
            size = os.path.getsize(path)
            report["content"] = Path(path).read_bytes() if size <= MAX_FILE_BYTES else size
    return report


def _loaded_from(directory, content, as_path=False):
    """``content`` written to a path of its own (another directory, another name than the save's): the file is all
    that load_checkpoint gets."""
    path = checkpoint.temporary_path(directory, as_path, "resumed.pt")
    Path(path).write_bytes(content)
    return path


@probe
@problems.single_threaded
def roundtrip_save_run(save_checkpoint, check, seed, device, as_path):
    """``check_checkpoint_roundtrip``'s save: train, save. Returns ``{"saved": the state saved, "failure": the
    save's, "file", "content": the file's bytes}``; a failure is ``[detail, hint]``."""
    model, optimizer, scaler, _, step = checkpoint.roundtrip_start(seed, device)
    saved = state(model, optimizer, scaler)
    return {"saved": saved, **_save(check, save_checkpoint, model, optimizer, scaler, step, as_path)}


@probe
@problems.single_threaded
def roundtrip_load_run(load_checkpoint, check, seed, new_seed, device, as_path, content):
    """``check_checkpoint_roundtrip``'s loads, in a process that never ran the save (under trusted grading): the
    file's ``content`` loaded into new objects (drawn from ``new_seed``), then into objects that trained on after
    the save (the same run, rebuilt from ``seed``). Returns ``{"loads": [{"step", "state"} or {"failure"}]}``; the
    run stops at a failure."""
    model, optimizer, scaler, data, _ = checkpoint.roundtrip_start(seed, device)
    checkpoint.train_steps(model, optimizer, scaler, data[checkpoint.ROUNDTRIP_STEPS[0]:], device)
    fresh = checkpoint.make_run(torch.Generator().manual_seed(new_seed), device)
    report = {"loads": []}
    with tempfile.TemporaryDirectory() as directory:
        path = _loaded_from(directory, content, as_path)
        for objects in (fresh, (model, optimizer, scaler)):
            got, failure = _student(check, load_checkpoint, path, *objects, what="load_checkpoint")
            report["loads"].append({"failure": failure} if failure else {"step": got, "state": state(*objects)})
            if failure:
                break
    return report


@probe
@problems.single_threaded
def resume_save_run(save_checkpoint, check, seed):
    """``check_checkpoint_resume_exact``'s first half: the run interrupted after the cut and saved. Returns
    ``{"failure": the save's, "file", "content": the file's bytes}``."""
    start, data, cut = checkpoint.resume_problem(seed)
    interrupted = checkpoint.run_from(start)
    checkpoint.train_steps(*interrupted, data[:cut])
    return _save(check, save_checkpoint, *interrupted, cut)


@probe
@problems.single_threaded
def resume_load_run(load_checkpoint, check, seed, new_seed, content):
    """``check_checkpoint_resume_exact``'s second half, in a process that never ran the save (under trusted
    grading): new objects (drawn from ``new_seed``), ``load_checkpoint`` from the file's ``content``, and the rest
    of the run (the problem of ``seed``). Returns ``{"load_failure", "step", "loaded": the state right after
    loading, "losses": the resumed run's, "final"}``; the resumed run goes on only when the step is the cut."""
    _, data, cut = checkpoint.resume_problem(seed)
    resumed = checkpoint.make_run(torch.Generator().manual_seed(new_seed))
    report = {}
    with tempfile.TemporaryDirectory() as directory:
        path = _loaded_from(directory, content)
        step, report["load_failure"] = _student(check, load_checkpoint, path, *resumed, what="load_checkpoint")
    if report["load_failure"]:
        return report
    report["step"], report["loaded"] = step, state(*resumed)
    if type(step) is int and step == cut:
        report["losses"] = checkpoint.train_steps(*resumed, data[step:])
        report["final"] = state(*resumed)
    return report


@probe
@problems.single_threaded
def saved_file_run(save_checkpoint, check, seed):
    """``check_checkpoint_weights_only``'s save: ``{"file", "content": the file's bytes}`` (or a ``"failure"``)."""
    gen = torch.Generator().manual_seed(seed)
    model, optimizer, scaler = checkpoint.make_run(gen)
    checkpoint.train_steps(model, optimizer, scaler, checkpoint.batches(gen, 3 + seed % 3))
    return _save(check, save_checkpoint, model, optimizer, scaler, 3)


@probe
@problems.single_threaded
def refusal_run(load_checkpoint, check, seed, content):
    """``load_checkpoint`` into new objects (drawn from ``seed``) from a copy of the checkpoint ``content`` (the
    file's bytes) with one pickled object added (``checkpoint.with_probe``): ``{"probe_ran": whether unpickling it
    ran the probe}`` (or a ``"failure"``)."""
    with tempfile.TemporaryDirectory() as directory:
        original = Path(directory) / "checkpoint.pt"
        original.write_bytes(content)
        loaded = torch.load(original, weights_only=True)
        path = checkpoint.probed_copy(loaded, directory)
        model, optimizer, scaler = checkpoint.make_run(torch.Generator().manual_seed(seed))
        checkpoint.probe_runs.clear()
        _, failure = _student(check, lambda: checkpoint.attempt(load_checkpoint, path, model, optimizer, scaler),
                              what="load_checkpoint")
        ran = bool(checkpoint.probe_runs)
        checkpoint.probe_runs.clear()
    return {"failure": failure, "probe_ran": ran}
