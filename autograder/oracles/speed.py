"""The grader's own answers to the speed exercises, timed beside the student's to calibrate a threshold in the same
run (grader-only).

``timing.expect_speedup(..., reference="speed.row_sum")`` times one of these against the same baseline, interleaved
with the student's runs: under trusted grading in the clean worker (where no student code ever runs), defined there
from this module's source (``timing.reference_in``), since the grading sandbox shows the kit only; in one process,
here. The student's speedup must reach a stated fraction of this one's (``settings.speed.thresholds[...]
.of_reference``): a fixed ratio holds on one machine, a fraction of the reference's measured on the same device in
the same minutes holds on any.

Each is the course's reference solution as a careful student writes it (argument checks included).
"""

import torch


def row_sum(x):
    """The sum of x over dimension 0, in one vectorized call."""
    return torch.sum(x, dim=0)


def batch_gather(tensor, indices):
    """out[b, k...] = tensor[b, indices[b, k...]], with the solution's checks (two host syncs on CUDA)."""
    batch, rows = tensor.shape[0], tensor.shape[1]
    if indices.shape[0] != batch:
        raise ValueError(f"indices has batch size {indices.shape[0]}, but tensor has batch size {batch}")
    if indices.numel():
        low, high = int(indices.min()), int(indices.max())
        if low < 0 or high >= rows:
            raise IndexError(f"indices must lie in [0, {rows}), got values from {low} to {high}")
    offsets = torch.arange(batch, device=tensor.device) * rows
    offsets = offsets.reshape(batch, *[1] * (indices.dim() - 1))
    return tensor.reshape(batch * rows, *tensor.shape[2:])[indices + offsets]


_AMP_RUNS = {}


def amp_float16(marker, seed, width):
    """The AMP recipe's loop, float16 autocast with a GradScaler, on the timed problem (``checks.amp.speed``: built
    once per device, seed and width in this process, as the float32 baseline is)."""
    from autograder.checks.amp.speed import LEARNING_RATE, float16_loop, timed_problem, timed_result
    from autograder.checks.amp.problems import mse

    key = (str(marker.device), seed, width)
    if key not in _AMP_RUNS:
        model, batches = timed_problem(marker.device, seed, width)
        _AMP_RUNS[key] = (model, batches, torch.optim.SGD(model.parameters(), lr=LEARNING_RATE))
    model, batches, optimizer = _AMP_RUNS[key]
    with torch.enable_grad():
        return timed_result(float16_loop(model, batches, optimizer, mse, marker.device.type), marker)
