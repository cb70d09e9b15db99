"""The ``operators`` answers the checks compare against (grader-only)."""

import torch


def masked_mean(x, low, high):
    """The oracle, in float64: mean over dim 0 of the entries in [low, high]; 0 where there is none."""
    total, count = _in_range(x, low, high, closed=True)
    return total / count.clamp(min=1)


def masked_mean_mistakes(x, low, high):
    """What five known mistakes give on the same input (the check tells a result that matches one by name): the
    bounds left out (``>``, ``<``); the sum in range divided by ``N`` rather than by the count; the count not clamped,
    so that a position with nothing in range is 0 / 0 = NaN; x multiplied by the
    0/1 mask, which keeps a NaN or an infinity outside the range (0 * inf and 0 * nan are NaN); NaN counted as in
    range ("not below and not above")."""
    open_total, open_count = _in_range(x, low, high, closed=False)
    total, count = _in_range(x, low, high, closed=True)
    multiplied, _ = _in_range(x, low, high, closed=True, select=lambda inside, x64: x64 * inside)
    nan_total, nan_count = _in_range(x, low, high, closed=True, nan_inside=True)
    return {"bounds excluded": open_total / open_count.clamp(min=1), "divided by N": total / max(x.shape[0], 1),
            "0 / 0": total / count,
            "multiplied by the mask": multiplied / count.clamp(min=1),
            "NaN counted": nan_total / nan_count.clamp(min=1)}


def _in_range(x, low, high, *, closed, select=None, nan_inside=False):
    """The float64 sum over dim 0 of the entries in range (bounds included when ``closed``), and their count.
    ``select(inside, x64)``: what is summed (the entries in range, 0 elsewhere, unless told); ``nan_inside``: NaN is
    in range, as "neither below nor above" says."""
    x64 = x.double()
    low64 = low.double() if isinstance(low, torch.Tensor) else low
    high64 = high.double() if isinstance(high, torch.Tensor) else high
    inside = (x64 >= low64) & (x64 <= high64) if closed else (x64 > low64) & (x64 < high64)
    if nan_inside:
        inside = inside | torch.isnan(x64)
    summed = torch.where(inside, x64, torch.zeros_like(x64)) if select is None else select(inside, x64)
    return summed.sum(dim=0), inside.sum(dim=0)
