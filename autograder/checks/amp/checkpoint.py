"""The checkpoint exercise: the student's ``save_checkpoint`` / ``load_checkpoint`` around the grader's own loop.

The training problem is chosen so that every part of a checkpoint matters:

* the model has buffers (``BatchNorm1d``'s running statistics and batch count), which
  ``model.parameters()`` misses and ``model.state_dict()`` holds;
* the optimizer is Adam, whose moving averages and step counts are state;
* the ``GradScaler`` starts at 2**24, far too high for these gradients: the first steps
  overflow float16 and are skipped while the scale backs off, and with a growth interval
  of 2 it grows again after every second clean step, overflows, backs off... Its scale and
  growth tracker at the checkpoint decide which later steps are skipped, so a resumed run
  with a fresh scaler takes other steps than the uninterrupted one.

Everything runs on the CPU (float16 autocast, ``GradScaler("cpu")``), where the same
operations in the same order give bit-identical results: a run resumed from a checkpoint
must reproduce the uninterrupted run's losses exactly.

Saving is checked with ``torch.load(path, weights_only=True)`` and a walk of what it
returns (only dicts, lists, tuples, strings, numbers, ``None`` and tensors); loading is
checked with a probe: a copy of the checkpoint holding one pickled object whose
unpickling calls :func:`_probe_ran`. ``torch.load(..., weights_only=True)`` refuses the
file; ``weights_only=False`` runs the probe, as it would run any code a file names.

The student's functions are called where they live (``probes/checkpoint_runs.py``, run beside them);
what comes back is plain data, judged here against the grader's own runs.
"""

import copy
import re
from pathlib import Path

import torch

from autograder.checks.amp import problems
from autograder.errors import CheckFailure, named_kind
from autograder.seam.student import describe

SIZES = (16, 32, 8)                  # in, hidden (with BatchNorm), out
LEARNING_RATE = 1e-2
SCALER_OPTIONS = {"init_scale": 2.0 ** 24, "growth_interval": 2}
# Resume check: 14 batches, interrupted after 6 to 10 of them. Measured over seeds 0-39 given to resume_problem
# (torch 2.13.0, CPU, 2026-11-22): 4 to 6 steps are skipped before the cut, Adam has taken 1 to 5 steps, the scale
# at the cut is 2**19 to 2**21 and it changes 2 to 5 times after the cut; resuming with a fresh scaler changes the
# losses in 40 of 40 seeds (tests/checks/test_amp.py::test_checkpoint_problem_makes_every_part_matter). A drawn cut
# before Adam's first step (none in 900 seeds drawn as the check draws them) moves to the first cut after it.
RESUME_BATCHES = 14
RESUME_CUTS = (6, 11)            # the cut is drawn from range(*RESUME_CUTS) by the seed, after Adam's first step
ROUNDTRIP_STEPS = (8, 3)         # steps before the save (Adam has stepped by then), and after it
PLAIN = (dict, list, tuple, str, int, float, bool, type(None), torch.Tensor)

SAVE_HINT = ("Save one dict of state dicts: `torch.save({'model': model.state_dict(), 'optimizer': "
             "optimizer.state_dict(), 'scaler': scaler.state_dict(), 'step': step}, path)`.")
LOAD_HINT = ("Load it into the objects you are given: `checkpoint = torch.load(path, weights_only=True)`, then "
             "`model.load_state_dict(checkpoint['model'])`, the same for the optimizer and the scaler, and "
             "`return checkpoint['step']`.")
PART_HINTS = {
    "model": "Save `model.state_dict()`: it holds the parameters and the buffers (BatchNorm's running_mean, "
             "running_var, num_batches_tracked); `model.parameters()` holds only the parameters.",
    "optimizer": "Save `optimizer.state_dict()` and restore it with `optimizer.load_state_dict(...)`: Adam's "
                 "moving averages (exp_avg, exp_avg_sq) and step counts are part of the run.",
    "scaler": "Save `scaler.state_dict()` and restore it into the scaler you are given with "
              "`scaler.load_state_dict(...)`: a new GradScaler starts again at its initial scale and loses the "
              "growth tracker, so it skips other steps than the uninterrupted run.",
}

probe_runs = []


def _probe_ran():
    """Called by the unpickler when a checkpoint holding the probe is loaded with ``weights_only=False``."""
    probe_runs.append(True)
    return "the grader's probe ran"


class _Probe:
    def __reduce__(self):
        return _probe_ran, ()


# ------------------------------------------------------------------ the training problem

def make_model(gen, device="cpu"):
    """Linear(16, 32), BatchNorm1d(32), ReLU, Linear(32, 8) in float32, every parameter drawn from ``gen``."""
    model = torch.nn.Sequential(torch.nn.Linear(SIZES[0], SIZES[1]), torch.nn.BatchNorm1d(SIZES[1]),
                                torch.nn.ReLU(), torch.nn.Linear(SIZES[1], SIZES[2]))
    with torch.no_grad():
        for name, p in model.named_parameters():
            fan_in = p.shape[1] if p.dim() > 1 else SIZES[1]
            scale = 0.3 if name.startswith("3.") else 1.0
            p.copy_(torch.randn(p.shape, generator=gen) * scale / fan_in ** 0.5 + (1.0 if name == "1.weight" else 0.0))
    return model.to(device)


def make_optimizer(model):
    return torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)


def make_scaler(device="cpu"):
    return torch.amp.GradScaler(device, **SCALER_OPTIONS)


def make_run(gen, device="cpu"):
    model = make_model(gen, device)
    return model, make_optimizer(model), make_scaler(device)


def run_from(model):
    """A new run (Adam, the scaler) from a copy of ``model``."""
    model = copy.deepcopy(model)
    return model, make_optimizer(model), make_scaler()


def resume_problem(seed):
    """The resume check's problem, drawn from ``seed`` (its stream's seed) alike by the grader and where the
    student's code runs: ``(the model's start, the batches, the cut)``."""
    gen = torch.Generator().manual_seed(seed)
    start = make_model(gen)
    data = batches(gen, RESUME_BATCHES)
    return start, data, resume_cut(seed, start, data)


def resume_cut(seed, start, data):
    """After how many steps the resume check interrupts the run: drawn by ``seed`` from ``RESUME_CUTS``, or, if
    Adam has not stepped by then (the scaler skips the first steps), the first cut after Adam's first step: a cut
    before it could not show a checkpoint that leaves the optimizer's state out."""
    low, high = RESUME_CUTS
    model, optimizer, scaler = run_from(start)
    stepped = []
    for batch in data[:high - 1]:
        train_steps(model, optimizer, scaler, [batch])
        stepped.append(bool(optimizer.state))
    drawn = low + seed % (high - low)
    return next((cut for cut in range(drawn, high) if stepped[cut - 1]), high - 1)


def batches(gen, count, device="cpu"):
    return problems.regression_batches(gen, count, device, sizes=SIZES)


def train_steps(model, optimizer, scaler, data, device="cpu"):
    """The grader's float16 loop, one step per batch; returns the losses (detached tensors)."""
    losses = []
    for inputs, targets in data:
        with torch.autocast(device, dtype=torch.float16):
            loss = problems.mse(model(inputs), targets)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.detach())
    return losses


def roundtrip_start(seed, device):
    """The round-trip check's run up to the save, drawn from ``seed`` (its stream's seed), the same in the grader
    and in the worker: ``(model, optimizer, scaler, data, step)``, trained ``ROUNDTRIP_STEPS[0]`` steps; ``data``
    holds the batches after the save too."""
    gen = torch.Generator().manual_seed(seed)
    model, optimizer, scaler = make_run(gen, device)
    before, after = ROUNDTRIP_STEPS
    data = batches(gen, before + after, device)
    train_steps(model, optimizer, scaler, data[:before], device)
    step = int(torch.randint(1, 100_000, (1,), generator=gen))
    return model, optimizer, scaler, data, step


def _number(value):
    """2**24 for a power of two above 1000, else the number as Python writes it."""
    exponent = float(value).hex().split("p")[-1] if value > 1000 and float(value).hex().startswith("0x1.000") else None
    return f"2**{int(exponent)}" if exponent else f"{value:g}"


def describe_problem(device="cpu"):
    options = ", ".join(f"{k}={_number(v)}" for k, v in SCALER_OPTIONS.items())
    return (f"model Linear({SIZES[0]}, {SIZES[1]}), BatchNorm1d({SIZES[1]}), ReLU, Linear({SIZES[1]}, {SIZES[2]}); "
            f"optimizer Adam(lr={LEARNING_RATE:g}); scaler GradScaler({device!r}, {options}); float16 autocast on "
            f"the {device.upper()}, MSE, batches of {problems.BATCH}")


# ------------------------------------------------------------------ state

def snapshot(model, optimizer, scaler):
    """Deep copies of the three state dicts (what a checkpoint must restore)."""
    return {"model": copy.deepcopy(model.state_dict()), "optimizer": copy.deepcopy(optimizer.state_dict()),
            "scaler": copy.deepcopy(scaler.state_dict())}


def first_difference(expected, got, where):
    """Where ``got`` first differs from ``expected`` (nested dicts, lists, tensors, numbers), as text; or ``None``."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return f"{where} is {describe(got)}, expected a tensor"
        if got.shape != expected.shape or got.dtype != expected.dtype:
            return (f"{where} is a {got.dtype} tensor of shape {list(got.shape)}, expected {expected.dtype} of "
                    f"shape {list(expected.shape)}")
        a, b = got.detach().cpu(), expected.detach().cpu()
        if torch.equal(a, b):
            return None
        if a.is_floating_point():
            diff = (a.double() - b.double()).abs().max().item()
            return f"{where} differs (largest difference {diff:.3g}): got {describe(a, 4)}, expected {describe(b, 4)}"
        return f"{where} is {describe(a, 4)}, expected {describe(b, 4)}"
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return f"{where} is {describe(got)}, expected a dict"
        missing, extra = [k for k in expected if k not in got], [k for k in got if k not in expected]
        if missing or extra:
            return f"{where} has keys {sorted(got, key=repr)}, expected {sorted(expected, key=repr)}"
        for key in expected:
            found = first_difference(expected[key], got[key], f"{where}[{key!r}]")
            if found:
                return found
        return None
    if isinstance(expected, (list, tuple)):
        if not isinstance(got, (list, tuple)) or len(got) != len(expected):
            return f"{where} is {describe(got)}, expected {describe(expected)}"
        for i, (e, g) in enumerate(zip(expected, got)):
            found = first_difference(e, g, f"{where}[{i}]")
            if found:
                return found
        return None
    if got != expected:
        return f"{where} is {got!r}, expected {expected!r}"
    return None


def state_differences(expected, *objects):
    """``{part: text}`` for each of model, optimizer, scaler whose state differs from the snapshot ``expected``;
    ``objects`` are the three objects, or one ``{part: state dict}`` (what ``checkpoint_runs.state`` reports)."""
    if len(objects) == 1:
        now = objects[0] if type(objects[0]) is dict else {}
    else:
        model, optimizer, scaler = objects
        now = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict()}
    found = {part: first_difference(expected[part], now.get(part), f"{part}.state_dict()") for part in expected}
    return {part: text for part, text in found.items() if text}


def expect_step(check, step, expected, case):
    __tracebackhide__ = True
    if isinstance(step, bool) or not isinstance(step, int):
        raise CheckFailure(check, f"load_checkpoint returned {describe(step)}; expected the step that was saved, "
                                  f"{expected}, as a Python int.\nCase: {case}",
                           hint="Save `step` as it is given (an int) and return `checkpoint['step']`.")
    if step != expected:
        raise CheckFailure(check, f"load_checkpoint returned step {step}, but the checkpoint was saved with step "
                                  f"{expected}.\nCase: {case}",
                           hint="Return the step that was saved, unchanged: the caller resumes with the batches "
                                "after it.")


def expect_state_restored(check, expected, now, when, case, against="the saved one"):
    """The state ``now`` (``{part: state dict}``) is ``expected``."""
    __tracebackhide__ = True
    differences = state_differences(expected, now)
    if differences:
        part, text = next(iter(differences.items()))
        others = [p for p in differences if p != part]
        raise CheckFailure(check, f"{when}, the {part}'s state is not {against}: {text}."
                                  + (f" The {' and '.join(others)} differ too." if others else "")
                                  + f"\nCase: {case}", hint=PART_HINTS[part],
                           kind=named_kind(f"{when}, the {part}'s state is not {against}"))


# ------------------------------------------------------------------ the file

def temporary_path(directory, as_path, name="checkpoint.pt"):
    path = Path(directory) / name
    return path if as_path else str(path)


def expect_file(check, report, case):
    """The student's call did not fail (``report["failure"]``), and it wrote a file (``report["file"]``: ``{"path",
    "written"}``, from ``checkpoint_runs``)."""
    __tracebackhide__ = True
    expect_no_failure(check, report.get("failure"))
    written = report.get("file") or {}
    if written.get("written") is not True:
        raise CheckFailure(check, f"save_checkpoint(path, ...) wrote no file at path ({written.get('path')!r})."
                                  f"\nCase: {case}", hint=SAVE_HINT)


def expect_no_failure(check, failure):
    """A call of the student's that failed in a run (``failure = [detail, hint]``) is this check's failure."""
    __tracebackhide__ = True
    if failure:
        detail, hint, *kind = failure
        raise CheckFailure(check, str(detail), hint=hint, kind=str(kind[0]) if kind else None)


def unsafe_globals(path):
    """The classes and functions a checkpoint pickles (torch >= 2.5 can list them without loading)."""
    lister = getattr(torch.serialization, "get_unsafe_globals_in_checkpoint", None)
    try:
        return lister(path) if lister else []
    except Exception:  # noqa: BLE001 - a file torch cannot read: the load error says enough
        return []


def _load_error(error):
    """The line of a torch.load error that says what went wrong, without terminal colour codes."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(error))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    useful = [line for line in lines if "Unsupported" in line or "WeightsUnpickler error" in line]
    return (useful or lines or [type(error).__name__])[0][:300]


def plain_content_problem(value, where="checkpoint"):
    """The first thing in a loaded checkpoint that is not a dict, list, tuple, string, number, None or tensor."""
    if not isinstance(value, PLAIN):
        return f"{where} is a {type(value).__module__}.{type(value).__qualname__}"
    if isinstance(value, dict):
        for key, item in value.items():
            found = plain_content_problem(key, f"a key of {where}") or plain_content_problem(item, f"{where}[{key!r}]")
            if found:
                return found
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            found = plain_content_problem(item, f"{where}[{i}]")
            if found:
                return found
    return None


def expect_weights_only_file(check, path, case):
    """The file loads with ``torch.load(path, weights_only=True)`` and holds only plain data; returns it."""
    __tracebackhide__ = True
    try:
        content = torch.load(path, weights_only=True)
    except Exception as error:  # noqa: BLE001
        names = unsafe_globals(path)
        why = (f"it pickles {', '.join(sorted(names))}, which weights_only=True does not rebuild" if names
               else _load_error(error))
        raise CheckFailure(check, f"torch.load(path, weights_only=True) refuses the checkpoint: {why}."
                                  f"\nCase: {case}",
                           hint="Save state dicts, not objects: `torch.save(model)` (or an optimizer, a scaler) "
                                "pickles the object and names its class, which weights_only=True refuses to "
                                "import. " + SAVE_HINT) from None
    problem = plain_content_problem(content)
    if problem:
        raise CheckFailure(check, f"the checkpoint holds more than state dicts: {problem}.\nCase: {case}",
                           hint="Keep to dicts, lists, numbers, strings and tensors: " + SAVE_HINT)
    return content


def with_probe(content):
    """``content`` (a loaded checkpoint) with one pickled object added, which runs :func:`_probe_ran` when
    unpickled."""
    if isinstance(content, dict):
        return {**content, "_grader_probe": _Probe()}
    return {"checkpoint": content, "_grader_probe": _Probe()}


def probed_copy(content, directory):
    """The path of a copy of the checkpoint ``content`` with the probe added (:func:`with_probe`), in ``directory``."""
    path = str(Path(directory) / "with-a-pickled-object.pt")
    torch.save(with_probe(content), path)
    return path


def attempt(fn, *args):
    """``fn(*args)``; an exception other than NotImplementedError is returned, not raised (refusing is right)."""
    try:
        return fn(*args)
    except NotImplementedError:
        raise
    except Exception as error:  # noqa: BLE001
        return error


def expect_refused(check, report, case):
    """``load_checkpoint`` did not run the probe (``report``: what ``checkpoint_runs.refusal_run`` returned)."""
    __tracebackhide__ = True
    expect_no_failure(check, report.get("failure"))
    if report.get("probe_ran") is not False:
        raise CheckFailure(check, "load_checkpoint ran code from the file: given a checkpoint that also holds a "
                                  "pickled object (one whose unpickling calls a function), it unpickled it and the "
                                  "function ran. A checkpoint downloaded from elsewhere could run anything that "
                                  f"way.\nCase: {case}; then load_checkpoint(path, model, optimizer, scaler) on a "
                                  "copy of that checkpoint with one pickled object added",
                           hint="Load with `torch.load(path, weights_only=True)` (the default since PyTorch 2.6): "
                                "it rebuilds tensors, dicts, lists and numbers, and refuses everything else. Never "
                                "pass weights_only=False for a file you did not make yourself.")
