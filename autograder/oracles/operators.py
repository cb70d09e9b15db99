"""The ``operators`` answers the checks compare against (grader-only)."""

import torch


def masked_mean(x, low, high):
    """The oracle, in float64: mean over dim 0 of the entries in [low, high]; 0 where there is none."""
    x64 = x.double()
    low64 = low.double() if isinstance(low, torch.Tensor) else low
    high64 = high.double() if isinstance(high, torch.Tensor) else high
    inside = (x64 >= low64) & (x64 <= high64)
    total = torch.where(inside, x64, torch.zeros_like(x64)).sum(dim=0)
    return total / inside.sum(dim=0).clamp(min=1)
