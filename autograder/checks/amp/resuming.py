"""Checks for the checkpoint exercise of the ``amp`` assignment: ``save_checkpoint`` / ``load_checkpoint``.

Each check runs the student's functions around the grader's own float16 loop where they live
(``probes/checkpoint_runs.py``, beside them), and judges what comes back (the step returned, the states
after loading, the resumed run's losses, the file's bytes) against its own run from the same
seeds (``checkpoint.py``).

**A checkpoint is resumed from the file alone.** The save runs where the student's code runs; the file's bytes
come back to the grader, and ``load_checkpoint`` reads them from another path, with another name, in a process
that never ran the save (``remote.in_fresh_process``: under trusted grading a second worker of the notebook that
ran its cells and no check's call). A ``save_checkpoint`` that keeps the state in memory (a dict keyed by path, or
by anything else) has nothing to give there. In one process (a student's own notebook, ``check``) the load runs in
the same process from the other path: a state kept in memory under the path is missed there too, one kept under
anything else is only caught by the official grade.
"""

import tempfile
from pathlib import Path

import torch

from autograder.checks.amp import checkpoint, problems
from autograder.checks.amp.probes import checkpoint_runs
from autograder.contracts import exercised
from autograder.errors import CheckFailure
from autograder.source_evidence.source_rules import safe_load
from autograder.spec import graded


def _carried(check, report, case):
    """The checkpoint file's bytes, as the save's run sent them back: all that goes on to the loading process."""
    __tracebackhide__ = True
    content = report.get("content")
    if type(content) is not bytes:
        raise CheckFailure(check, f"the checkpoint file is {content} bytes, far more than these small models need "
                                  f"(at most {checkpoint_runs.MAX_FILE_BYTES} bytes are read).\nCase: {case}",
                           hint=checkpoint.SAVE_HINT)
    return content


def _devices():
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@graded(2, hidden=[{"as_path": True}])
@problems.single_threaded
def check_checkpoint_roundtrip(check, save_checkpoint, load_checkpoint, *, seed=0, as_path=False):
    """``save_checkpoint(path, model, optimizer, scaler, step)`` writes a file from which
    ``load_checkpoint(path, model, optimizer, scaler)`` restores the model (parameters and buffers), the
    optimizer's state, the scaler's state and returns the step: into new objects, and into the same objects
    after they trained on (on the CPU, and on CUDA where there is a GPU)."""
    __tracebackhide__ = True
    # the run's seed and the new objects' (the load into them), sent to where the student's functions run
    seed, new_seed = check.seed_for("roundtrip"), check.seed_for("new objects")
    for device in _devices():
        model, optimizer, scaler, _, step = checkpoint.roundtrip_start(seed, device)
        before, after = checkpoint.ROUNDTRIP_STEPS
        saved = checkpoint.snapshot(model, optimizer, scaler)
        case = (f"{checkpoint.describe_problem(device)}; trained {before} steps, then save_checkpoint(path, model, "
                f"optimizer, scaler, step={step})")
        exercised(f"on_{device}", "new_objects", "same_objects", "path_object" if as_path else "str_path")
        report = save_checkpoint.beside(checkpoint_runs.roundtrip_save_run, check, seed, device, as_path)
        if device != "cpu":     # CUDA kernels need not give bit-identical results in two processes
            saved = report.get("saved")
        checkpoint.expect_file(check, report, case)
        content = _carried(check, report, case)
        loader = load_checkpoint.in_fresh_process()    # only the file goes over: a process that never saved
        loads = loader.beside(checkpoint_runs.roundtrip_load_run, check, seed, new_seed, device, as_path,
                              content).get("loads")
        loads = loads if type(loads) is list else []
        for k, into in enumerate(("new objects", f"the same objects, {after} steps later")):
            if k >= len(loads):
                raise CheckFailure(check, f"the run of load_checkpoint into {into} did not come back.")
            checkpoint.expect_no_failure(check, loads[k].get("failure"))
            when = f"after load_checkpoint(path, model, optimizer, scaler) into {into}"
            checkpoint.expect_step(check, loads[k]["step"], step, f"{case}; load_checkpoint into {into}")
            checkpoint.expect_state_restored(check, saved, loads[k]["state"], when, case)


@graded(3, hidden=[{}])
@problems.single_threaded
def check_checkpoint_resume_exact(check, save_checkpoint, load_checkpoint, *, seed=0):
    """A run interrupted after some steps, saved, and resumed from the checkpoint in new objects gives the
    uninterrupted run's losses bit for bit (float16 autocast and a GradScaler on the CPU, the scale backing
    off and growing across the interruption), and ends with the same model, optimizer and scaler state."""
    __tracebackhide__ = True
    # the problem's seed and the new objects' (the resumed run), sent to where the student's functions run
    seed, new_seed = check.seed_for("resume"), check.seed_for("new objects")
    start, data, cut = checkpoint.resume_problem(seed)
    whole = checkpoint.run_from(start)
    expected = checkpoint.train_steps(*whole, data)
    interrupted = checkpoint.run_from(start)
    losses = checkpoint.train_steps(*interrupted, data[:cut])
    at_save = checkpoint.snapshot(*interrupted)
    case = (f"{checkpoint.describe_problem()}; {len(data)} batches; the run is interrupted after {cut} steps "
            f"(save_checkpoint(path, model, optimizer, scaler, step={cut})) and resumed in new objects "
            f"(load_checkpoint(path, model, optimizer, scaler))")
    exercised("interrupted_and_resumed", "fresh_process")
    report = save_checkpoint.beside(checkpoint_runs.resume_save_run, check, seed)
    checkpoint.expect_file(check, report, case)
    content = _carried(check, report, case)
    loader = load_checkpoint.in_fresh_process()    # only the file goes over: a process that never saved
    report = loader.beside(checkpoint_runs.resume_load_run, check, seed, new_seed, content)
    checkpoint.expect_no_failure(check, report.get("load_failure"))
    checkpoint.expect_step(check, report.get("step"), cut, case)
    lost = checkpoint.state_differences(at_save, report.get("loaded"))
    resumed = report.get("losses")
    if type(resumed) is not list or not all(isinstance(loss, torch.Tensor) for loss in resumed):
        raise CheckFailure(check, f"the resumed run's losses did not come back.\nCase: {case}")
    losses += resumed
    for b, (got, want) in enumerate(zip(losses, expected)):
        if not torch.equal(got, want):
            parts = ", ".join(lost) if lost else "nothing that load_checkpoint restored"
            raise CheckFailure(check, f"batch {b}: the resumed run's loss is {got.item()!r}, the uninterrupted "
                                      f"run's {want.item()!r}: the runs differ from the first step after the "
                                      f"interruption on.\nRight after loading, what differed from the saved "
                                      f"state: {parts}" + (f" ({next(iter(lost.values()))})" if lost else "")
                                      + f".\nCase: {case}",
                               hint=checkpoint.PART_HINTS[next(iter(lost))] if lost else checkpoint.LOAD_HINT)
    if len(losses) != len(expected):
        raise CheckFailure(check, f"the resumed run took {len(resumed)} steps, expected {len(expected) - cut}."
                                  f"\nCase: {case}", hint=checkpoint.LOAD_HINT)
    checkpoint.expect_state_restored(check, checkpoint.snapshot(*whole), report.get("final"),
                                     "at the end of the resumed run", case, against="the uninterrupted run's")


@graded(2, hidden=[{}], source=[safe_load("load_checkpoint")],
        worker_facts="whether loading ran the pickled probe (the refusal run)", facts_only_cost=True)
@problems.single_threaded
def check_checkpoint_weights_only(check, save_checkpoint, load_checkpoint, *, seed=0):
    """The checkpoint file loads with ``torch.load(path, weights_only=True)`` and holds only plain data (dicts,
    lists, numbers, strings, tensors: state dicts, no pickled object); and ``load_checkpoint`` refuses a file
    that holds a pickled object instead of running it (it loads with ``weights_only=True``)."""
    __tracebackhide__ = True
    # the saved run's seed and the new objects' (the load that must refuse), sent to where the student's functions run
    seed, new_seed = check.seed_for("saved file"), check.seed_for("new objects")
    case = f"{checkpoint.describe_problem()}; save_checkpoint(path, model, optimizer, scaler, step=3)"
    report = save_checkpoint.beside(checkpoint_runs.saved_file_run, check, seed)
    checkpoint.expect_file(check, report, case)
    content = _carried(check, report, case)
    with tempfile.TemporaryDirectory() as directory:        # the grader reads the file's bytes itself
        path = Path(directory) / "checkpoint.pt"
        path.write_bytes(content)
        exercised("saved_file")
        checkpoint.expect_weights_only_file(check, str(path), case)
    exercised("pickled_object")
    refusal = load_checkpoint.beside(checkpoint_runs.refusal_run, check, new_seed, content)
    checkpoint.expect_refused(check, refusal, case)
