"""Reference solutions for the `vectorization` assignment.

Generated from source/vectorization/vectorization.ipynb by `python -m autograder build`; do not edit.
"""


# --- cell batch_gather_loop ---
import warnings
from typing import List

import torch


def batch_gather_loop(tensor: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    """out[b] = tensor[b][indices[b]], one batch element at a time (TorchScript-compatible)."""
    rows: List[torch.Tensor] = []
    for b in range(tensor.shape[0]):
        rows.append(tensor[b][indices[b]])
    return torch.stack(rows)


with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)   # torch >= 2.13: "torch.jit.script is deprecated"
    scripted_batch_gather = torch.jit.script(batch_gather_loop)


# --- cell batch_gather ---
def batch_gather(tensor, indices):
    """out[b, k...] = tensor[b, indices[b, k...]] for tensor [B, N, *F] and indices [B, *K]."""
    batch, rows = tensor.shape[0], tensor.shape[1]
    if indices.shape[0] != batch:
        raise ValueError(f"indices has batch size {indices.shape[0]}, but tensor has batch size {batch}")
    if indices.numel():
        low, high = int(indices.min()), int(indices.max())
        if low < 0 or high >= rows:
            raise IndexError(f"indices must lie in [0, {rows}), got values from {low} to {high}")
    offsets = torch.arange(batch, device=tensor.device) * rows          # batch element b starts at row b * N
    offsets = offsets.reshape(batch, *[1] * (indices.dim() - 1))        # broadcast over K
    flat = tensor.reshape(batch * rows, *tensor.shape[2:])              # [B * N, *F]
    return flat[indices + offsets]


# --- cell masked_batch_mean ---
import torch


def masked_batch_mean(x, lengths):
    """out[b] = x[b, :lengths[b]].mean(0) for x [B, T, F] and lengths [B]; 0 where lengths[b] == 0."""
    steps = torch.arange(x.shape[1], device=x.device)             # [T]
    kept = steps < lengths[:, None]                                # [B, T]: True on the real steps
    total = torch.where(kept[:, :, None], x, 0).sum(1)             # [B, F]: padding, even NaN, never enters
    count = lengths.clamp(min=1).to(x.dtype)[:, None]              # an empty row divides its 0 by 1
    return total / count
