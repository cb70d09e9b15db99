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
LEARNING_RATE = 1.0      # checks/amp/speed.py's TIMED_LEARNING_RATE


def amp_float16(call_seed, seed, width, layers, batch, device, batches=8):
    """The AMP recipe's loop, float16 autocast with a GradScaler, on the timed problem as every side runs it
    (checks/amp/speed.py: ``layers`` x Linear(width) with ReLU between them, built once per device, seed and size in
    this process; each call from the model's start, on ``batches`` batches of ``batch`` rows drawn from
    ``call_seed``, MSE, SGD; the same record made at the end). Only its time counts: the student's records are judged
    against the float32 baseline's."""
    device = torch.device(device)
    key = (str(device), seed, width, layers, batch)
    if key not in _AMP_RUNS:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            parts = [m for i in range(layers) for m in (torch.nn.Linear(width, width), torch.nn.ReLU())][:-1]
            model = torch.nn.Sequential(*parts).to(device)
        initial = [param.detach().clone() for param in model.parameters()]
        _AMP_RUNS[key] = (model, initial, torch.optim.SGD(model.parameters(), lr=LEARNING_RATE))
    model, initial, optimizer = _AMP_RUNS[key]
    gen = torch.Generator(device=device) if device.type == "cuda" else torch.Generator()
    data = torch.randn(batches, 2, batch, width, generator=gen.manual_seed(int(call_seed)), device=device)
    with torch.no_grad():
        for param, start in zip(model.parameters(), initial):
            param.copy_(start)
    optimizer.zero_grad(set_to_none=True)
    scaler = torch.amp.GradScaler(device.type)
    losses = []
    with torch.enable_grad():
        for k in range(batches):
            with torch.autocast(device.type, dtype=torch.float16):
                loss = torch.nn.functional.mse_loss(model(data[k, 0]), data[k, 1])
            scaler.scale(loss).backward()
            losses.append(loss.detach())
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
    with torch.no_grad():
        terms = [((param - start) * start).double() for param, start in zip(model.parameters(), initial)]
        record = torch.stack([t.sum() for t in terms] + [t.norm() for t in terms]).cpu()
    return torch.cat([torch.tensor(torch.stack(losses).tolist(), dtype=torch.float64), record])
