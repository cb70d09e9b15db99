"""Reference solutions for the `vectorization` assignment.

Generated from source/vectorization/vectorization.ipynb by `python -m autograder build`; do not edit.
"""


# --- cell batch_gather ---
import torch


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


# --- cell per_sample_grads ---
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap


def per_sample_grads(model, params, x, y):
    """{name: [B, *shape]}: the gradient of each sample's cross-entropy with respect to params."""
    def sample_loss(params, xi, yi):                       # one sample: xi [F], yi a 0-d class id
        logits = functional_call(model, params, (xi[None],))
        return F.cross_entropy(logits, yi[None])

    return vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)


# --- cell masked_batch_mean ---
import torch


def masked_batch_mean(x, lengths):
    """out[b] = x[b, :lengths[b]].mean(0) for x [B, T, F] and lengths [B]; 0 where lengths[b] == 0."""
    steps = torch.arange(x.shape[1], device=x.device)             # [T]
    kept = steps < lengths[:, None]                                # [B, T]: True on the real steps
    total = torch.where(kept[:, :, None], x, 0).sum(1)             # [B, F]: padding, even NaN, never enters
    count = lengths.clamp(min=1).to(x.dtype)[:, None]              # an empty row divides its 0 by 1
    return total / count
