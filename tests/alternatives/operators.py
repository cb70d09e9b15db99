"""A second correct solution, written differently from the reference: row_sum as a reduction over the
last dimension after moving dim 0 there, masked_mean with masked_fill, logical_not and a where-guarded division."""

import torch


def row_sum(x):
    return x.movedim(0, -1).sum(-1)


def masked_mean(x, low, high):
    outside = (x < low) | (x > high) | torch.isnan(x)
    count = (~outside).sum(0)
    total = x.masked_fill(outside, 0).sum(0)
    return torch.where(count > 0, total / count, torch.zeros_like(total))
