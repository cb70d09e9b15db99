"""The ``operators`` answers the checks compare against (grader-only)."""

import torch


def masked_mean(x, low, high):
    """The oracle, in float64: mean over dim 0 of the entries in [low, high]; 0 where there is none."""
    x64, inside = _inside(x, low, high, closed=True)
    total = torch.where(inside, x64, torch.zeros_like(x64)).sum(dim=0)
    return total / inside.sum(dim=0).clamp(min=1)


def masked_mean_mistakes(x, low, high):
    """What two known mistakes give on the same input (the check tells a result that matches one by name): the
    bounds left out (``>``, ``<``), and the sum in range divided by ``N`` rather than by the count."""
    x64, open_inside = _inside(x, low, high, closed=False)
    excluded = torch.where(open_inside, x64, torch.zeros_like(x64)).sum(dim=0) / open_inside.sum(dim=0).clamp(min=1)
    x64, inside = _inside(x, low, high, closed=True)
    by_rows = torch.where(inside, x64, torch.zeros_like(x64)).sum(dim=0) / max(x.shape[0], 1)
    return {"bounds excluded": excluded, "divided by N": by_rows}


def _inside(x, low, high, *, closed):
    x64 = x.double()
    low64 = low.double() if isinstance(low, torch.Tensor) else low
    high64 = high.double() if isinstance(high, torch.Tensor) else high
    if closed:
        return x64, (x64 >= low64) & (x64 <= high64)
    return x64, (x64 > low64) & (x64 < high64)
