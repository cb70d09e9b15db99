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
LEARNING_RATE = 1e-3      # checks/amp/speed.py's


def amp_float16(marker, seed, width, layers, batch, batches=8):
    """The AMP recipe's loop, float16 autocast with a GradScaler, on a problem of the timed size (``layers`` x
    Linear(width) with ReLU between them, ``batches`` batches of ``batch`` rows, MSE, SGD), built once per device,
    seed and size in this process, as the float32 baseline is. Only its time counts: the student's results are
    checked against the baseline's."""
    device = marker.device
    key = (str(device), seed, width, layers, batch)
    if key not in _AMP_RUNS:
        gen = torch.Generator().manual_seed(seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            parts = [m for i in range(layers) for m in (torch.nn.Linear(width, width), torch.nn.ReLU())][:-1]
            model = torch.nn.Sequential(*parts).to(device)
        data = [tuple(torch.randn(batch, width, generator=gen).to(device) for _ in range(2)) for _ in range(batches)]
        _AMP_RUNS[key] = (model, data, torch.optim.SGD(model.parameters(), lr=LEARNING_RATE))
    model, data, optimizer = _AMP_RUNS[key]
    scaler = torch.amp.GradScaler(device.type)
    with torch.enable_grad():
        for inputs, targets in data:
            with torch.autocast(device.type, dtype=torch.float16):
                loss = torch.nn.functional.mse_loss(model(inputs), targets)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
    return torch.ones_like(marker)
