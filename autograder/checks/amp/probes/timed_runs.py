"""What the ``amp`` speed item runs where the student's code lives, and in the clean worker: the timed problem,
the grader's float32 baseline loop (:func:`float32_timed_baseline`), the student's run built beside ``train_amp``
(:class:`TimedRun`), and the count of host synchronisations (:func:`student_host_syncs`). The grader's side, which
times and judges them, is ``speed.py``.
"""

import contextlib
import math
import warnings

import torch

from autograder.checks.amp import problems
from autograder.checks.amp.problems import mse
from autograder.checks.amp.timed_judge import TIMED_BATCHES
from autograder.errors import CheckFailure
from autograder.measuring.timing import sync_debug_mode
from autograder.seam.probes import probe
from autograder.seam.student import call_student

TUTORIAL_WIDTH = 4096


TUTORIAL_LAYERS = 3


TUTORIAL_BATCH = 512


# The timed problem: larger than the recipe's (3 x Linear(4096), batch 512), which does not keep a current
# datacenter GPU busy (on an H200 each of its steps took about 2 ms, mostly launches and GradScaler's host sync, so
# float16 + GradScaler gained only 1.38-1.50x over float32): at batch 4096 the matrix products dominate a step and
# tensor cores show. benchmarks/amp.py --sweep measures the candidates on a GPU; docs/amp.md.
TIMED_WIDTH = 4096


TIMED_LAYERS = 4


TIMED_BATCH = 4096


LEARNING_RATE = 1e-3


# The timed calls' rate: each call trains from the same start (the grader judges every call's result by training the
# same batches), and at 1e-3 most of a step of the mean squared error over batch x width values is below float32's
# resolution of the weights, so a loop that skips its steps could not be told from one that takes them. At this rate
# the step of every layer is many units in the last place of its weights (tests/checks/test_amp_timed.py).
TIMED_LEARNING_RATE = 1.0


def _legacy_flags_readable():
    try:
        torch.backends.cuda.matmul.allow_tf32  # noqa: B018 - raises if the newer API was used
        torch.backends.cudnn.allow_tf32  # noqa: B018
        return True
    except RuntimeError:
        return False


@contextlib.contextmanager
def full_float32_precision():
    """Turn TF32 off for matmuls and convolutions inside the block; yield a description of the precision.

    Restores the previous setting on exit.
    """
    if _legacy_flags_readable() or not hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
                 torch.get_float32_matmul_precision())
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        try:
            yield "float32 at full IEEE precision (TF32 off: allow_tf32=False, matmul precision 'highest')"
        finally:
            torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved[:2]
            torch.set_float32_matmul_precision(saved[2])
    else:
        saved = (torch.backends.cuda.matmul.fp32_precision, torch.backends.cudnn.fp32_precision)
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        torch.backends.cudnn.fp32_precision = "ieee"
        try:
            yield "float32 at full IEEE precision (TF32 off: fp32_precision='ieee' for matmul and cuDNN)"
        finally:
            torch.backends.cuda.matmul.fp32_precision, torch.backends.cudnn.fp32_precision = saved


def tutorial_model(device="cuda", width=TUTORIAL_WIDTH, layers=TUTORIAL_LAYERS):
    """The PyTorch AMP recipe's network: ``layers`` x (Linear(width, width), ReLU), the last without ReLU."""
    modules = []
    for i in range(layers):
        modules.append(torch.nn.Linear(width, width))
        if i < layers - 1:
            modules.append(torch.nn.ReLU())
    return torch.nn.Sequential(*modules).to(device)


def timed_model(device, seed, width=TIMED_WIDTH, layers=TIMED_LAYERS):
    """The timed problem's model for ``seed`` (the caller's random state kept)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return tutorial_model(device, width, layers)


def float32_loop(model, batches, optimizer, loss_fn):
    """The grader's plain float32 training loop: what ``train_amp`` must beat (no host sync per batch either:
    the losses are read back once, at the end)."""
    losses = []
    for inputs, targets in batches:
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        losses.append(loss.detach())
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return torch.stack(losses).tolist() if losses else []


SYNC_BATCHES = (4, 8)      # the host syncs are counted over this many batches: their growth is per batch


def host_syncs(fn):
    """How many times ``fn()`` makes the host wait for the GPU (``set_sync_debug_mode("warn")`` warnings)."""
    torch.cuda.synchronize()
    with warnings.catch_warnings(record=True) as caught, sync_debug_mode("warn"):
        warnings.simplefilter("always")
        fn()
    return sum(1 for w in caught if "synchroniz" in str(w.message).lower())


def sync_problem(seed, count, device):
    gen = torch.Generator().manual_seed(seed)
    model = problems.small_model(gen, device)
    batches = problems.regression_batches(gen, count, device)
    return model, batches, torch.optim.SGD(model.parameters(), lr=0.5)


@probe
def student_host_syncs(train_amp, check, device, seed, count):
    """``{"syncs": host syncs of train_amp (float16) on ``count`` batches}``, or ``{"failure": [detail, hint]}``;
    run beside ``train_amp`` (reported by the student's process)."""
    model, batches, opt = sync_problem(seed, count, device)
    try:
        return {"syncs": host_syncs(lambda: call_student(check, lambda: train_amp(
            model, batches, opt, mse, device_type=device, dtype=torch.float16), what="train_amp"))}
    except CheckFailure as failure:
        return {"failure": [failure.detail, failure.hint, failure.kind]}


CALL_SEED = 0    # the timed calls' first argument: each call's own seed (``timed_inputs``), this in the template


def timed_batches(call_seed, device, width=TIMED_WIDTH, batch=TIMED_BATCH, count=TIMED_BATCHES):
    """A timed call's batches, drawn afresh from its seed on ``device`` inside the grader's clock (the same on every
    side for one seed): ``count`` pairs of ``[batch, width]`` inputs and targets. Fresh values, not rows of a pool
    made ahead: a step's result is a sum over its rows, so anything tabulated over a pool's rows before the clock
    starts would answer it cheaper than training does."""
    device = torch.device(device)
    gen = torch.Generator(device=device) if device.type == "cuda" else torch.Generator()
    gen.manual_seed(int(call_seed))
    data = torch.randn(count, 2, batch, width, generator=gen, device=device)
    return [(data[k, 0], data[k, 1]) for k in range(count)]


def restart(model, initial, optimizer):
    """Put ``model`` back at its ``initial`` parameters (every timed call trains from the same start, so the grader
    can train the same batches itself), gradients cleared."""
    with torch.no_grad():
        for param, start in zip(model.parameters(), initial):
            param.copy_(start)
    optimizer.zero_grad(set_to_none=True)


def timed_record(losses, model, initial):
    """What a timed run returns, float64 on the CPU: the ``TIMED_BATCHES`` losses (NaN where the loop did not return
    one number per batch), then for each parameter the projection of its step on its start,
    ``sum((p - p0) * p0)``, then the same terms' norm (the scale the grader's tolerance is measured in). A dense,
    random projection: no cheaper computation than the training step gives it."""
    ok = isinstance(losses, (list, tuple)) and len(losses) == TIMED_BATCHES and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in losses)
    head = torch.tensor([float(v) for v in losses] if ok else [math.nan] * TIMED_BATCHES, dtype=torch.float64)
    with torch.no_grad():
        terms = [((param.detach() - start) * start).double() for param, start in zip(model.parameters(), initial)]
        steps = torch.stack([t.sum() for t in terms] + [t.norm() for t in terms]).cpu()
    return torch.cat([head, steps])


@probe
class TimedRun:
    """The student's ``train_amp`` (float16) on the timed problem, one call per timed call, each from the model's
    start on fresh batches (:func:`timed_batches`); made beside it."""

    def __init__(self, train_amp, device, seed, width=TIMED_WIDTH):
        self.train_amp, self.device = train_amp, device
        self.model = timed_model(device, seed, width)
        self.initial = [param.detach().clone() for param in self.model.parameters()]
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=TIMED_LEARNING_RATE)

    def __call__(self, call_seed, seed, width, layers=TIMED_LAYERS, batch=TIMED_BATCH, device=None):
        batches = timed_batches(call_seed, self.device, width, batch)
        restart(self.model, self.initial, self.optimizer)
        with torch.enable_grad():      # the timer runs under no_grad; a training loop needs gradients
            losses = self.train_amp(self.model, batches, self.optimizer, mse, device_type=self.device,
                                    dtype=torch.float16)
        return timed_record(losses, self.model, self.initial)


_BASELINES = {}


@probe
def float32_timed_baseline(call_seed, seed, width=TIMED_WIDTH, layers=TIMED_LAYERS, batch=TIMED_BATCH,
                           device="cpu"):
    """The grader's float32 loop (TF32 off) on the batches of ``call_seed``, from the model's start (built once per
    device, seed and width in this process): the baseline a :class:`TimedRun` is timed against, in a worker where no
    student code ran, and the record its results are judged against (:func:`judge_timed_runs`)."""
    device = torch.device(device)
    key = (str(device), seed, width)
    if key not in _BASELINES:
        model = timed_model(device, seed, width)
        initial = [param.detach().clone() for param in model.parameters()]
        _BASELINES[key] = (model, initial, torch.optim.SGD(model.parameters(), lr=TIMED_LEARNING_RATE))
    model, initial, optimizer = _BASELINES[key]
    batches = timed_batches(call_seed, device, width, batch)
    restart(model, initial, optimizer)
    with torch.enable_grad(), full_float32_precision():
        return timed_record(float32_loop(model, batches, optimizer, mse), model, initial)
