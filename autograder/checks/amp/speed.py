"""The ``amp`` speed measurement on CUDA: the tutorial's model, the grader's float32 loop, a pinned baseline.

The baseline is float32 at full IEEE precision: with TF32 on, an Ampere or later
GPU runs "float32" matmuls on tensor cores and the comparison would measure TF32
against float16, not float32. The user's setting is restored afterwards, through
the same API it was made with (PyTorch refuses to mix the legacy ``allow_tf32``
flags with the newer ``fp32_precision`` ones).
"""

import contextlib
import copy

import torch

from ...errors import CheckFailure
from ...timing import expect_speedup
from .problems import mse

TUTORIAL_WIDTH = 4096
TUTORIAL_LAYERS = 3
TUTORIAL_BATCH = 512
TIMED_BATCHES = 8          # batches per timed call of the training loop
LEARNING_RATE = 1e-3


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


def tutorial_batches(gen, device="cuda", width=TUTORIAL_WIDTH, batch=TUTORIAL_BATCH, count=TIMED_BATCHES):
    return [(torch.randn(batch, width, generator=gen).to(device), torch.randn(batch, width, generator=gen).to(device))
            for _ in range(count)]


def float32_loop(model, batches, optimizer, loss_fn):
    """The grader's plain float32 training loop: what ``train_amp`` must beat."""
    losses = []
    for inputs, targets in batches:
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        losses.append(loss.item())
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return losses


def expect_faster_than_float32(check, train_amp, device, *, seed=0):
    """Time ``train_amp`` (float16) against :func:`float32_loop` on the tutorial's model, TF32 off for the
    baseline; return the :class:`SpeedResult`, its note naming the baseline's precision."""
    __tracebackhide__ = True
    gen = torch.Generator().manual_seed(seed)
    amp_model = tutorial_model(device)
    base_model = copy.deepcopy(amp_model)
    batches = tutorial_batches(gen, device)
    amp_opt = torch.optim.SGD(amp_model.parameters(), lr=LEARNING_RATE)
    base_opt = torch.optim.SGD(base_model.parameters(), lr=LEARNING_RATE)

    def candidate():
        return train_amp(amp_model, batches, amp_opt, mse, device_type=device, dtype=torch.float16)

    def baseline():
        return float32_loop(base_model, batches, base_opt, mse)

    with full_float32_precision() as precision:
        try:
            result = expect_speedup(check, "amp", candidate, baseline, (), device=device,
                                    what="train_amp with float16",
                                    hint="Use float16 autocast for the forward pass; keep the loop free of "
                                         "extra synchronisations (one .item() per batch) and extra copies.")
        except CheckFailure as failure:
            failure.measurements["baseline_precision"] = precision
            raise
    result.note = (result.note + " " if result.note else "") + f"baseline: {precision}."
    return result
