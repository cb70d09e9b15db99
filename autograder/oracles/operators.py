"""The ``operators`` answers the checks compare against (grader-only)."""

import torch


def masked_mean(x, low, high):
    """The oracle, in float64: mean over dim 0 of the entries in [low, high]; 0 where there is none."""
    total, count = _in_range(x, low, high, closed=True)
    return total / count.clamp(min=1)


def masked_mean_mistakes(x, low, high):
    """What two known mistakes give on the same input (the check tells a result that matches one by name): the
    bounds left out (``>``, ``<``), and the sum in range divided by ``N`` rather than by the count."""
    open_total, open_count = _in_range(x, low, high, closed=False)
    total, _ = _in_range(x, low, high, closed=True)
    return {"bounds excluded": open_total / open_count.clamp(min=1), "divided by N": total / max(x.shape[0], 1)}


def _in_range(x, low, high, *, closed):
    """The float64 sum over dim 0 of the entries in range (bounds included when ``closed``), and their count."""
    x64 = x.double()
    low64 = low.double() if isinstance(low, torch.Tensor) else low
    high64 = high.double() if isinstance(high, torch.Tensor) else high
    inside = (x64 >= low64) & (x64 <= high64) if closed else (x64 > low64) & (x64 < high64)
    return torch.where(inside, x64, torch.zeros_like(x64)).sum(dim=0), inside.sum(dim=0)
