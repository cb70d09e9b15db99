"""Reference solutions for the `operators` assignment.

Generated from source/operators/operators.ipynb by `python -m autograder build`; do not edit.
"""


# --- cell masked_mean ---
import torch


def masked_mean(x, low, high):
    """Mean over dim 0 of the entries of x in [low, high]; 0 where there is none."""
    inside = (x >= low) & (x <= high)
    total = torch.where(inside, x, torch.zeros_like(x)).sum(dim=0)
    count = inside.sum(dim=0)
    return total / count.clamp(min=1)


# --- cell row_sum ---
def row_sum(x):
    """The sum of x over dimension 0, in one vectorized call."""
    return torch.sum(x, dim=0)
